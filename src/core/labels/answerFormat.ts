// The final-answer block of each protocol, so a reviewer's corrected SQL can stand where the model's answer stood in
// exactly the format the protocol's prompt asks for (and its parser reads back).
import type { ProtocolName } from '../agent/types';

/** The answer block with `sql` in it, as the protocol's prompt asks the model to write it. */
export function answerBlock(protocol: ProtocolName, sql: string): string {
  const s = sql.trim();
  switch (protocol) {
    case 'skyrl':
    case 'sqltrail':
      return `<solution>${s}</solution>`;
    case 'mtir':
      // MTIR-SQL (App. C.2): the final SQL as a ```sql block inside <answer>.
      return `<answer>\n\`\`\`sql\n${s}\n\`\`\`\n</answer>`;
    case 'mtsqlr1':
      return `<answer_sql>${s}</answer_sql>`;
    case 'progress':
      // Progress-SQL answers every turn with one <sql> block (after its <think>).
      return `<sql>${s}</sql>`;
  }
}

/** Where the protocol's answer block opens in a turn's text (the parsers read the first one), or -1. */
function answerBlockStart(protocol: ProtocolName, text: string): number {
  const re =
    protocol === 'skyrl' || protocol === 'sqltrail'
      ? /<solution>/i
      : protocol === 'mtir'
        ? /<answer>/i
        : protocol === 'mtsqlr1'
          ? /<answer(?:\\)?_sql>/i
          : /<sql>/i;
  const m = re.exec(text);
  return m ? m.index : -1;
}

/**
 * The model's answer turn rewritten with `sql`: the text before its answer block (its reasoning) is kept when
 * `keepReasoning`, then the protocol's answer block with the corrected SQL; anything after the block is dropped.
 * When the turn has no recognisable answer block, the result is the answer block alone.
 */
export function rewriteAnswerTurn(
  protocol: ProtocolName,
  original: string,
  sql: string,
  keepReasoning: boolean,
): string {
  const block = answerBlock(protocol, sql);
  if (!keepReasoning) return block;
  const at = answerBlockStart(protocol, original);
  if (at < 0) return block;
  return original.slice(0, at) + block;
}
