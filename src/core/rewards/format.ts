// Format validity of a trajectory, per the paper whose protocol produced it. Checks read the raw assistant text of
// every turn (what the model actually wrote), not the protocol parser's tolerant reading of it.
//   skyrl    (SkyRL-SQL §4.1): every turn reasons in <think>…</think>; every intermediate turn has one <sql> block;
//            the rollout ends with one non-empty <solution> block.
//   sqltrail (SQL-Trail App. A.4, eq. 11): the final output has a reasoning block and a <solution> block. The
//            system prompt asks for <reasoning>, the prompt's example and App. A.4 use <think>: both are accepted.
// mtir     (MTIR-SQL §3.3): each turn starts with <think>…</think>; then either tool calls in <tool_call>…</tool_call>
//            (intermediate turns) or, in the last turn, <answer>…</answer> — never both ("do not mix").
//   other protocols: the episode ended with an answer and no turn was an invalid action.
import type { ProtocolName } from '../agent/types';
import type { TrajectoryRecord, TrajectoryTurn } from '../trajectories/types';

export interface FormatCheck {
  ok: boolean;
  /** Failure kind (`missing-solution`, `missing-think`, `unbalanced-tags`…) when not ok. */
  kind?: string;
  explanation: string;
}

export type FormatRule = 'skyrl' | 'sqltrail' | 'mtir' | 'generic';

/** Complete <tag>…</tag> blocks of a text, and whether opening and closing tags pair up. */
export function tagBlocks(text: string, tag: string): { blocks: string[]; balanced: boolean } {
  const open = text.split(`<${tag}>`).length - 1;
  const close = text.split(`</${tag}>`).length - 1;
  const re = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g');
  const blocks = [...text.matchAll(re)].map((m) => m[1]);
  return { blocks, balanced: open === close && blocks.length === open };
}

/**
 * A turn that begins inside a reasoning block the chat template opened in the prompt (Qwen3 opens `<think>`): the raw
 * text has `</think>` with no opening tag before it. The block is well-formed in the full transcript, so the opening
 * tag is put back before checking.
 */
export function reopenTemplateTag(text: string, tag: string): string {
  const close = text.indexOf(`</${tag}>`);
  if (close < 0) return text;
  const open = text.indexOf(`<${tag}>`);
  return open < 0 || open > close ? `<${tag}>${text}` : text;
}

const fail = (kind: string, explanation: string): FormatCheck => ({ ok: false, kind, explanation });

function endProblem(t: TrajectoryRecord): FormatCheck | null {
  if (t.turns.length === 0) return fail('no-turns', 'the trajectory has no assistant turns');
  if (t.end === 'error') return fail('episode-error', `the episode failed: ${t.error ?? 'model or environment error'}`);
  if (t.end === 'cancelled') return fail('cancelled', 'the episode was cancelled before an answer');
  return null;
}

function turnLabel(i: number, n: number): string {
  return i === n - 1 ? `final turn ${i + 1}` : `turn ${i + 1}`;
}

function checkSkyrl(t: TrajectoryRecord): FormatCheck {
  const bad = endProblem(t);
  if (bad) return bad;
  // §4.1 requires <think> in every turn. `thinking: true` is App. D.2's variant for native thinking models, whose
  // prompt drops the thinking instructions (their reasoning may reach us outside the content): no tag required.
  const needThink = t.protocol.config.thinking !== true;
  const n = t.turns.length;
  for (const turn of t.turns) {
    const where = turnLabel(turn.index, n);
    const text = reopenTemplateTag(turn.assistant, 'think');
    const think = tagBlocks(text, 'think'),
      sql = tagBlocks(text, 'sql'),
      sol = tagBlocks(text, 'solution');
    if (!think.balanced || !sql.balanced || !sol.balanced)
      return fail('unbalanced-tags', `${where}: unclosed or stray <think>/<sql>/<solution> tag`);
    if (needThink && think.blocks.length === 0) return fail('missing-think', `${where} has no <think>…</think> block`);
    const last = turn.index === n - 1;
    if (!last) {
      if (sol.blocks.length > 0)
        return fail('solution-before-end', `${where} gives a <solution> but the rollout goes on`);
      if (sql.blocks.length === 0) return fail('missing-sql', `${where} has neither an <sql> block nor a <solution>`);
      if (sql.blocks.length > 1)
        return fail('multiple-sql', `${where} has ${sql.blocks.length} <sql> blocks (one per turn)`);
    } else {
      if (sol.blocks.length === 0)
        return fail('missing-solution', `the rollout ends (${t.end}) without a <solution> block`);
      if (sol.blocks.length > 1)
        return fail('multiple-solution', `${where} has ${sol.blocks.length} <solution> blocks`);
      if (sol.blocks[0].trim() === '') return fail('empty-solution', `${where} has an empty <solution> block`);
    }
  }
  return {
    ok: true,
    explanation: `${n} turn(s) with ${needThink ? '<think> and ' : ''}<sql> blocks, ending in one <solution>`,
  };
}

function checkSqlTrail(t: TrajectoryRecord): FormatCheck {
  const bad = endProblem(t);
  if (bad) return bad;
  const text = reopenTemplateTag(reopenTemplateTag(t.turns[t.turns.length - 1].assistant, 'think'), 'reasoning');
  const reasoning = tagBlocks(text, 'reasoning'),
    think = tagBlocks(text, 'think');
  const sol = tagBlocks(text, 'solution');
  if (!reasoning.balanced || !think.balanced || !sol.balanced)
    return fail('unbalanced-tags', 'final output has an unclosed or stray <reasoning>/<think>/<solution> tag');
  if (reasoning.blocks.length + think.blocks.length === 0)
    return fail('missing-think', 'final output has no <reasoning>…</reasoning> (or <think>…</think>) block');
  if (sol.blocks.length === 0)
    return fail('missing-solution', `final output has no <solution>…</solution> block (episode ended: ${t.end})`);
  if (sol.blocks.length > 1)
    return fail('multiple-solution', `final output has ${sol.blocks.length} <solution> blocks`);
  if (sol.blocks[0].trim() === '') return fail('empty-solution', 'final output has an empty <solution> block');
  return { ok: true, explanation: 'final output has a reasoning block and one <solution> block' };
}

function checkMtirTurn(turn: TrajectoryTurn, last: boolean, where: string): FormatCheck | null {
  const text = reopenTemplateTag(turn.assistant, 'think');
  const think = tagBlocks(text, 'think'),
    call = tagBlocks(text, 'tool_call'),
    answer = tagBlocks(text, 'answer');
  if (!think.balanced || !call.balanced || !answer.balanced)
    return fail('unbalanced-tags', `${where}: unclosed or stray <think>/<tool_call>/<answer> tag`);
  if (!text.trimStart().startsWith('<think>') || think.blocks.length === 0)
    return fail('missing-think', `${where} does not start with a <think>…</think> block`);
  if (call.blocks.length > 0 && answer.blocks.length > 0)
    return fail('mixed-call-and-answer', `${where} mixes <tool_call> and <answer>`);
  const afterThink = text.slice(text.indexOf('</think>'));
  if (last) {
    if (answer.blocks.length === 0) return fail('missing-answer', `the episode ends without an <answer> block`);
    if (answer.blocks.length > 1)
      return fail('multiple-answer', `${where} has ${answer.blocks.length} <answer> blocks`);
    if (!/<\/answer>\s*$/.test(text)) return fail('text-after-answer', `${where} has text after </answer>`);
  } else {
    if (answer.blocks.length > 0)
      return fail('answer-before-end', `${where} gives an <answer> but the episode goes on`);
    if (call.blocks.length === 0)
      return fail('missing-tool-call', `${where} has neither a <tool_call> nor an <answer>`);
    if (afterThink.indexOf('<tool_call>') < 0) return fail('tag-order', `${where}: <tool_call> comes before </think>`);
  }
  return null;
}

function checkMtir(t: TrajectoryRecord): FormatCheck {
  const bad = endProblem(t);
  if (bad) return bad;
  const n = t.turns.length;
  for (const turn of t.turns) {
    const problem = checkMtirTurn(turn, turn.index === n - 1, turnLabel(turn.index, n));
    if (problem) return problem;
  }
  return { ok: true, explanation: `${n} turn(s): <think> then <tool_call>, ending in <think> then <answer>` };
}

function checkGeneric(t: TrajectoryRecord): FormatCheck {
  const bad = endProblem(t);
  if (bad) return bad;
  const invalid = t.turns.find((turn) => turn.action.kind === 'invalid');
  if (invalid)
    return fail(
      'invalid-action',
      `turn ${invalid.index + 1} was not a valid action (${invalid.action.problems.join('; ') || 'unparseable'})`,
    );
  if (t.end !== 'answer') return fail('no-answer', `the episode ended without an answer (${t.end})`);
  return { ok: true, explanation: `every turn was a valid action and the episode ended with an answer` };
}

function formatRuleFor(protocol: ProtocolName | string): FormatRule {
  return protocol === 'skyrl' || protocol === 'sqltrail' || protocol === 'mtir' ? protocol : 'generic';
}

/** Checks a trajectory under `rule` (default: the rule of the protocol that produced it). A bare SQL has no format. */
export function checkFormat(trajectory: TrajectoryRecord | null, rule?: FormatRule): FormatCheck {
  if (!trajectory) return { ok: true, explanation: 'bare SQL, no model output to check: counted as well-formed' };
  const r = rule ?? formatRuleFor(trajectory.protocol?.name ?? '');
  switch (r) {
    case 'skyrl':
      return checkSkyrl(trajectory);
    case 'sqltrail':
      return checkSqlTrail(trajectory);
    case 'mtir':
      return checkMtir(trajectory);
    default:
      return checkGeneric(trajectory);
  }
}
