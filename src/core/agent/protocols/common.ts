// Pieces the tag-based protocols share: choosing the action block of a turn, collecting the thought, MDP labels,
// restoring stripped stop strings, and Python-style error text. Nothing here throws on model text.
import type { ExecResult } from '../../db/types';
import type { SchemaInfo } from '../../db/schema/types';
import { renderSchema } from '../../db/schema/render';
import type { SchemaStyle } from '../../db/schema/renderStyles';
import type { MdpAction, ParsedAction, ProtocolConfig } from '../types';
import { findBlocks, stripCodeFence, removeBlocks, excerpt, type TagBlock } from './tags';

/** Responses longer than this are parsed in full but reported, so a runaway generation is visible in trajectories. */
export const LONG_RESPONSE_CHARS = 32_000;

export function invalid(problems: string[], thought: string | null = null): ParsedAction {
  return { kind: 'invalid', sql: null, thought, mdp: [], problems };
}

/**
 * Labels turns with MTSQL-R1's MDP actions: a SQL is PROPOSE unless the previous SQL failed (an execution error or
 * corrective feedback), then it is SELF-CORRECT; a SQL that runs adds EXECUTE; an answer is FINALIZE, preceded by
 * SELF-CORRECT when it follows a failure. Invalid turns leave the state alone. State changes only in `record`
 * (called from respond), so parse() can be repeated on the same text.
 */
export class MdpTracker {
  private lastFailed = false;

  forExecute(): MdpAction[] {
    return [this.lastFailed ? 'SELF-CORRECT' : 'PROPOSE', 'EXECUTE'];
  }

  forAnswer(): MdpAction[] {
    return this.lastFailed ? ['SELF-CORRECT', 'FINALIZE'] : ['FINALIZE'];
  }

  /** After a SQL turn: whether its SQL failed (error, or feedback asking for a fix). */
  record(failed: boolean): void {
    this.lastFailed = failed;
  }
}

interface TagTurn {
  /** The block that carries the action (the first action block that opened), or null. */
  block: TagBlock | null;
  /** Which action tag it is. */
  tag: string | null;
  /** The action text: fences and stray nested tags removed, trimmed. */
  body: string;
  /** Reasoning text before the action (think-tag contents, else prose), or null. */
  thought: string | null;
  problems: string[];
}

/**
 * Reads one tagged turn the way a server with stop strings would have produced it: generation ends at the first
 * closing action tag, so the action is the first action block that opened and anything after its close is
 * reported and ignored. An action block without a close runs to the end of the text (the server stripped the stop
 * string, or generation hit the length limit).
 */
export function readTagTurn(text: string, actionTags: string[], thinkTags: string[], requireThink = true): TagTurn {
  const problems: string[] = [];
  if (text.length > LONG_RESPONSE_CHARS) problems.push(`very long response (${text.length} characters)`);
  const candidates = actionTags.flatMap((t) => findBlocks(text, t)).sort((a, b) => a.start - b.start);
  const block = candidates[0] ?? null;
  const cutAt = block ? block.start : text.length;
  const thought = readThought(text.slice(0, cutAt), thinkTags, problems, block !== null, requireThink);
  if (!block) return { block: null, tag: null, body: '', thought, problems };

  let inner = block.inner;
  if (block.unclosed) {
    // A close of another action tag inside an unclosed block is a mismatched close (<solution>…</sql>): cut there.
    const other = actionTags
      .filter((t) => t !== block.tag)
      .map((t) => new RegExp(`</\\s*${t}\\s*>`, 'i').exec(inner))
      .filter((m): m is RegExpExecArray => m !== null)
      .sort((a, b) => a.index - b.index)[0];
    if (other) {
      problems.push(`<${block.tag}> closed by a mismatched ${other[0]}`);
      inner = inner.slice(0, other.index);
    } else {
      problems.push(`unclosed <${block.tag}>: taken to the end of the text`);
    }
  }
  if (block.nested) problems.push(`nested <${block.tag}> tags inside <${block.tag}>; inner tags removed`);
  // Any tag markup left inside the action (nested action tags, a stray <think>) is not SQL.
  const tagNames = [...actionTags, ...thinkTags, 'observation'];
  const markup = new RegExp(`</?\\s*(?:${tagNames.join('|')})(?:\\s[^<>]*)?>`, 'gi');
  if (!block.nested && markup.test(inner)) problems.push(`tags inside <${block.tag}> removed`);
  inner = inner.replace(markup, ' ');
  const unfenced = stripCodeFence(inner);
  if (unfenced.fenced) problems.push(`code fence inside <${block.tag}> removed`);

  const rest = block.unclosed ? '' : text.slice(block.end);
  if (rest.trim() !== '') {
    const more = actionTags
      .map((t) => [t, findBlocks(rest, t).length] as const)
      .filter(([, n]) => n > 0)
      .map(([t, n]) => `${n} <${t}>`);
    problems.push(
      `${rest.trim().length} characters after </${block.tag}> ignored` +
        (more.length ? ` (including ${more.join(', ')}); generation stops at the first closing tag` : ''),
    );
  }
  const insideThink = thinkTags.some((t) =>
    findBlocks(text, t).some((b) => b.start < block.start && b.end > block.end),
  );
  if (insideThink) problems.push(`the <${block.tag}> block is inside a reasoning block`);
  return { block, tag: block.tag, body: unfenced.text, thought, problems };
}

/**
 * The reasoning before the action: the think-tag blocks, or prose when there are none. A leading `</think>` with no
 * opening tag is the Qwen3 case, where the chat template opened the block in the prompt: the text before it is the
 * thought.
 */
export function readThought(
  before: string,
  thinkTags: string[],
  problems: string[],
  hasAction: boolean,
  requireThink: boolean,
): string | null {
  let head: string | null = null;
  let rest = before;
  for (const tag of thinkTags) {
    const close = new RegExp(`</\\s*${tag}\\s*>`, 'i').exec(rest);
    const open = new RegExp(`<${tag}(?:\\s[^<>]*)?>`, 'i').exec(rest);
    if (close && (!open || open.index > close.index)) {
      head = rest.slice(0, close.index).trim();
      rest = rest.slice(close.index + close[0].length);
      problems.push(
        `no opening <${tag}> before </${tag}> (a chat template may have opened it); the text before it is the thought`,
      );
      break;
    }
  }
  const blocks = thinkTags.flatMap((t) => findBlocks(rest, t)).sort((a, b) => a.start - b.start);
  const outside = removeBlocks(rest, thinkTags).trim();
  const parts = [head, ...blocks.map((b) => b.inner.trim())].filter((x): x is string => !!x);
  if (blocks.length === 0 && head === null) {
    if (outside === '') {
      if (requireThink) problems.push(`no <${thinkTags[0]}> block`);
      return null;
    }
    problems.push(
      `no <${thinkTags[0]}> block; ${hasAction ? 'text before the action' : 'the text'} taken as the thought`,
    );
    return outside;
  }
  if (outside !== '') problems.push(`${outside.length} characters of reasoning outside <${thinkTags[0]}>`);
  if (blocks.some((b) => b.unclosed)) problems.push(`unclosed <${blocks.find((b) => b.unclosed)?.tag}>`);
  return parts.join('\n\n') || null;
}

/** The standard problem for a turn without any action block. */
export function noActionProblem(text: string, actionTags: string[]): string {
  const shown = text.trim() === '' ? 'empty response' : `"${excerpt(text)}"`;
  return `no ${actionTags.map((t) => `<${t}>`).join(' or ')} block (${shown})`;
}

/**
 * The text as the model wrote it when a server stripped the stop string. With the stop string known it is
 * appended; without it, a stop at an unclosed action tag is inferred from the last tag that opened and never closed.
 */
export function restoreTagStop(text: string, stopString: string | null, finishReason: string, stops: string[]): string {
  if (finishReason !== 'stop') return text;
  if (stopString !== null) {
    return text.endsWith(stopString) || !stops.includes(stopString) ? text : text + stopString;
  }
  let best: { tag: string; at: number } | null = null;
  for (const stop of stops) {
    const tag = /^<\/\s*([^>\s]+)\s*>$/.exec(stop)?.[1];
    if (!tag) continue;
    const open = findBlocks(text, tag)
      .filter((b) => b.unclosed)
      .pop();
    if (open && (!best || open.start > best.at)) best = { tag, at: open.start };
  }
  return best ? `${text}</${best.tag}>` : text;
}

/** Python sqlite3's exception text, as the SkyRL-SQL traces show it ("OperationalError: no such column: x"). */
export function pythonErrorText(r: ExecResult): string {
  const msg = r.error ?? 'error';
  if (r.errorClass === 'sql') return /^[A-Za-z]*Error:/.test(msg) ? msg : `OperationalError: ${msg}`;
  return msg;
}

export function configNumber(config: ProtocolConfig, key: string, fallback: number): number {
  const v = config[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

export function configBool(config: ProtocolConfig, key: string, fallback: boolean): boolean {
  const v = config[key];
  return typeof v === 'boolean' ? v : fallback;
}

function configSchemaStyle(config: ProtocolConfig, fallback: SchemaStyle): SchemaStyle {
  const v = config.schemaStyle;
  return v === 'list' || v === 'ddl' || v === 'names' ? v : fallback;
}

/** The schema text of a prompt, in the configured style and character budget. */
export function schemaText(schema: SchemaInfo, config: ProtocolConfig, fallbackStyle: SchemaStyle): string {
  const maxChars = config.schemaMaxChars;
  const sampleRows = config.sampleRows;
  return renderSchema(schema, {
    style: configSchemaStyle(config, fallbackStyle),
    maxChars: typeof maxChars === 'number' && maxChars > 0 ? maxChars : undefined,
    sampleRows: typeof sampleRows === 'number' && sampleRows >= 0 ? sampleRows : undefined,
  });
}

/** The heading of the conversation memory the non-MTSQL-R1 protocols carry (Quarry's format; no paper has one). */
const EARLIER_HEADING = 'Earlier in this conversation:';

/** Characters of an earlier result the memory keeps: a summary, the model can run the SQL again to see more. */
const EARLIER_RESULT_CHARS = 300;

type HistoryItem = { question: string; sql: string; result?: string };

/**
 * The dialogue memory of skyrl, sqltrail, mtir and progress: every earlier question with its final SQL and a summary
 * of its result (Python `str(rows)` or the error, cut at EARLIER_RESULT_CHARS), numbered from 1, oldest first.
 * '' without history. MTSQL-R1 has its own memory (mtsqlr1/memory.ts).
 */
export function earlierInConversation(history: readonly HistoryItem[] | undefined): string {
  if (!history?.length) return '';
  const lines = [EARLIER_HEADING];
  history.forEach((h, i) => {
    const result = typeof h.result === 'string' ? h.result.replace(/\s+/g, ' ').trim() : '(not run)';
    const cut = result.length > EARLIER_RESULT_CHARS ? `${result.slice(0, EARLIER_RESULT_CHARS)}… (cut)` : result;
    lines.push(
      `${i + 1}. Question: ${h.question.trim()}`,
      `   Final SQL: ${h.sql.replace(/\s+/g, ' ').trim()}`,
      `   Result: ${cut}`,
    );
  });
  return lines.join('\n');
}

/** BIRD-style evidence and the conversation memory, as one "External Knowledge" text ('' when there is neither). */
export function externalKnowledge(evidence: string | undefined, history: readonly HistoryItem[] | undefined): string {
  const parts: string[] = [];
  if (evidence && evidence.trim() !== '') parts.push(evidence.trim());
  const earlier = earlierInConversation(history);
  if (earlier) parts.push(earlier);
  return parts.join('\n');
}
