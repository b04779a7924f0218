// Reads one MTSQL-R1 assistant turn: a `<tool_call>` to exec_sql or memory_retrieve, or the final `<answer_sql>`,
// with the verdict tags <exec_verify>/<memory_verify>, and labels the turn with its MDP actions (§3.1, Eq. 1).
// Never throws. What the parser decides, in order:
//  - Reasoning is <think>…</think>; tags inside a closed think block are mentions, not actions. An unclosed <think>
//    ends at the first action or verdict tag (App. D.2's first turn has no </think> before its tool call).
//  - The action is the first <tool_call> or <answer_sql> block in the text (a server with our stop string ends the
//    turn at the first </tool_call>); later action blocks are reported and ignored.
//  - A verdict counts only when there is something to judge: <exec_verify> after some exec_sql ran, <memory_verify>
//    after some memory_retrieve answered. The last one of each kind wins. `verify` holds explicit verdicts only.
//  - MDP labels follow Eq. 1 from the state the previous turns left: after an execution result the turn is an
//    E-VERIFY, after a memory result an M-VERIFY (App. D's model often judges without writing the tag); then a SQL
//    is PROPOSE when none came before, SELF-CORRECT when it differs from the current candidate, and the action adds
//    EXECUTE (exec_sql), M-VERIFY (memory_retrieve) or FINALIZE (answer).
import type { MdpAction, ParsedAction } from '../../types';
import { findBlocks, stripCodeFence, excerpt, type TagBlock } from '../tags';
import { invalid, LONG_RESPONSE_CHARS } from '../common';
import { parseLenientJson, type JsonValue } from '../lenientJson';
import { normalizeSql } from '../../../sql/normalize';
import { TOOL_NAMES, type ToolName } from './prompts';

type Phase = 'start' | 'executed' | 'memory';
type Verdict = 'pass' | 'no_pass';

/** What the earlier turns of the episode left behind; the parser reads it and never changes it. */
export interface TurnState {
  /** What the last answered tool call was: nothing yet, an execution or a memory retrieval. */
  phase: Phase;
  /** The current candidate SQL ŷ_k (the last SQL sent to a tool), or null. */
  candidate: string | null;
  executedAny: boolean;
  memoryAny: boolean;
  /** Whether the dialogue has earlier turns (memory_retrieve has something to return). */
  hasHistory: boolean;
}

export const INITIAL_STATE: TurnState = {
  phase: 'start',
  candidate: null,
  executedAny: false,
  memoryAny: false,
  hasHistory: false,
};

/** A parsed turn plus the tool it calls (ParsedAction's kind says execute/memory; this keeps the name for messages). */
export interface Mtsqlr1Action extends ParsedAction {
  tool?: ToolName;
}

const ACTION_TAGS = ['tool_call', 'answer_sql'] as const;
const VERDICT_TAGS = ['exec_verify', 'memory_verify'] as const;
const ALL_TAGS = ['think', ...ACTION_TAGS, ...VERDICT_TAGS, 'tool_response'];

/** Same SQL for MDP purposes: canonical text (keywords, spacing, trailing `;`) equal; string literals count exactly. */
function sameSql(a: string, b: string): boolean {
  try {
    return normalizeSql(a) === normalizeSql(b);
  } catch {
    return a.replace(/\s+|;+\s*$/g, '') === b.replace(/\s+|;+\s*$/g, '');
  }
}

export function parseTurn(raw: unknown, state: TurnState): Mtsqlr1Action {
  if (typeof raw !== 'string') return invalid(['the response is not text']);
  try {
    return parseText(raw, state);
  } catch (err) {
    return invalid([`the response could not be read (${(err as Error).message})`]);
  }
}

interface Region {
  start: number;
  end: number;
  inner: string;
}

function parseText(original: string, state: TurnState): Mtsqlr1Action {
  const problems: string[] = [];
  if (original.length > LONG_RESPONSE_CHARS) problems.push(`very long response (${original.length} characters)`);
  // Markdown-escaped tag names (`<answer\_sql>`) appear when a model writes in Markdown, as in the paper's PDF text.
  const text = original.replace(/<(\/?)\s*(tool|answer|exec|memory)\\_(call|sql|verify)\s*>/gi, '<$1$2_$3>');
  if (text !== original) problems.push('Markdown-escaped tag names (\\_) read as plain tags');

  const thinks = thinkRegions(text, problems);
  const actionText = blankOut(text, thinks);
  const thinkText = thinks.map((r) => r.inner).join('\n');

  const actions = ACTION_TAGS.flatMap((t) => findBlocks(actionText, t)).sort((a, b) => a.start - b.start);
  const block = actions[0] ?? null;
  let thought: string | null =
    thinks
      .map((r) => r.inner.trim())
      .filter((s) => s !== '')
      .join('\n\n') || null;
  if (thought === null) {
    const before = actionText.slice(0, block ? block.start : actionText.length);
    const prose = before.replace(new RegExp(`</?\\s*(?:${ALL_TAGS.join('|')})(?:\\s[^<>]*)?>`, 'gi'), ' ').trim();
    thought = prose === '' ? null : prose;
  }
  if (actions.length > 1) {
    const rest = actions.slice(1).map((b) => `<${b.tag}>`);
    problems.push(
      `${actions.length} action blocks in one turn; only the first (<${block!.tag}>) is ` +
        `used, ${rest.join(', ')} ignored`,
    );
  }

  const verify = readVerdicts(actionText, thinkText, state, problems);

  if (!block) {
    const strayClose = ACTION_TAGS.find((t) => new RegExp(`</\\s*${t}\\s*>`, 'i').test(actionText));
    const mentioned = ACTION_TAGS.find((t) => findBlocks(thinkText, t).length > 0);
    const shown = text.trim() === '' ? 'empty response' : `"${excerpt(text)}"`;
    problems.push(
      `no <tool_call> and no <answer_sql> (${shown})` +
        (strayClose ? `; a </${strayClose}> without its opening tag` : '') +
        (mentioned ? `; a <${mentioned}> appears only inside <think>` : ''),
    );
    return {
      kind: 'invalid',
      sql: null,
      thought,
      mdp: verify.given ? verifyPrefix(state) : [],
      ...(verify.value ? { verify: verify.value } : {}),
      problems,
    };
  }

  const read = block.tag === 'tool_call' ? readToolCall(block) : readAnswer(block);
  problems.push(...read.problems);
  if (read.sql === null) {
    return {
      kind: 'invalid',
      sql: null,
      thought,
      mdp: verify.given ? verifyPrefix(state) : [],
      ...(verify.value ? { verify: verify.value } : {}),
      problems,
    };
  }

  const kind = read.tool === 'exec_sql' ? 'execute' : read.tool === 'memory_retrieve' ? 'memory' : 'answer';
  const mdp: MdpAction[] = [...verifyPrefix(state)];
  if (state.candidate === null) mdp.push('PROPOSE');
  else if (!sameSql(state.candidate, read.sql)) mdp.push('SELF-CORRECT');
  mdp.push(kind === 'execute' ? 'EXECUTE' : kind === 'memory' ? 'M-VERIFY' : 'FINALIZE');

  // What the paper's instructions ask for but the turn skipped: recorded, not refused.
  if (kind === 'memory' && !state.executedAny)
    problems.push('memory_retrieve before any exec_sql (the prompt asks to execute first)');
  if (kind === 'answer' && !state.executedAny)
    problems.push("answer without any exec_sql call (the prompt says: Please call 'exec_sql' tool at least once)");
  else if (kind === 'answer' && !state.memoryAny && state.hasHistory)
    problems.push(
      "answer without memory_retrieve (the exec_sql message says: You have to call 'memory_retrieve' tool " +
        '… at least once)',
    );
  if (kind === 'answer' && (verify.value?.exec === 'no_pass' || verify.value?.memory === 'no_pass'))
    problems.push('answer given after a no_pass verdict in the same turn');
  if (kind === 'answer' && state.candidate !== null && mdp.includes('SELF-CORRECT'))
    problems.push('the final SQL differs from the last SQL sent to a tool (it was never executed as written)');

  return {
    kind,
    sql: read.sql,
    thought,
    mdp,
    ...(verify.value ? { verify: verify.value } : {}),
    ...(read.tool ? { tool: read.tool } : {}),
    problems,
  };
}

/** The text with the regions (sorted, disjoint) replaced by spaces, so offsets still line up. One pass. */
function blankOut(text: string, regions: Region[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const r of regions) {
    if (r.start < at) continue;
    parts.push(text.slice(at, r.start), ' '.repeat(r.end - r.start));
    at = r.end;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

/** The verification the turn performs just by being the next turn after a tool's answer. */
function verifyPrefix(state: TurnState): MdpAction[] {
  return state.phase === 'executed' ? ['E-VERIFY'] : state.phase === 'memory' ? ['M-VERIFY'] : [];
}

/**
 * Reasoning spans: closed <think> blocks; a leading </think> whose <think> the chat template wrote (Qwen3); an
 * unclosed <think>, which ends where the first action or verdict tag opens.
 */
function thinkRegions(text: string, problems: string[]): Region[] {
  const regions: Region[] = [];
  const firstClose = /<\/\s*think\s*>/i.exec(text);
  const firstOpen = /<think(?:\s[^<>]*)?>/i.exec(text);
  let from = 0;
  if (firstClose && (!firstOpen || firstOpen.index > firstClose.index)) {
    regions.push({ start: 0, end: firstClose.index + firstClose[0].length, inner: text.slice(0, firstClose.index) });
    problems.push(
      'no opening <think> before </think> (a chat template may have opened it); the text before it is the thought',
    );
    from = firstClose.index + firstClose[0].length;
  }
  const rest = text.slice(from);
  for (const b of findBlocks(rest, 'think')) {
    if (!b.unclosed) {
      regions.push({ start: from + b.start, end: from + b.end, inner: b.inner });
      continue;
    }
    const after = rest.slice(b.innerStart);
    const stop = new RegExp(`<(?:${[...ACTION_TAGS, ...VERDICT_TAGS].join('|')})(?:\\s[^<>]*)?>`, 'i').exec(after);
    const innerEnd = stop ? b.innerStart + stop.index : rest.length;
    regions.push({ start: from + b.start, end: from + innerEnd, inner: rest.slice(b.innerStart, innerEnd) });
    problems.push(
      stop
        ? `unclosed <think>: it is taken to end at the first ${stop[0]}`
        : 'unclosed <think>: the whole response is reasoning',
    );
  }
  return regions;
}

function normalizeVerdict(inner: string): Verdict | null {
  const v = stripCodeFence(inner)
    .text.replace(/^['"`\s]+|['"`\s.]+$/g, '')
    .toLowerCase();
  if (v === 'pass' || v === 'passed' || v === 'yes') return 'pass';
  if (/^(no[_\s-]?pass|not[_\s-]?pass|fail|failed|no)$/.test(v)) return 'no_pass';
  return null;
}

interface Verdicts {
  value: { exec?: Verdict; memory?: Verdict } | null;
  given: boolean;
}

function readVerdicts(actionText: string, thinkText: string, state: TurnState, problems: string[]): Verdicts {
  const out: { exec?: Verdict; memory?: Verdict } = {};
  let given = false;
  for (const tag of VERDICT_TAGS) {
    let blocks = findBlocks(actionText, tag);
    if (blocks.length === 0) {
      blocks = findBlocks(thinkText, tag).filter((b) => !b.unclosed);
      if (blocks.length > 0) problems.push(`<${tag}> given only inside <think>; taken as the verdict`);
    }
    if (blocks.length === 0) continue;
    const values = blocks.map((b) => ({ b, v: normalizeVerdict(b.inner) }));
    const bad = values.filter((x) => x.v === null);
    if (bad.length > 0) problems.push(`<${tag}> is not pass or no_pass ("${excerpt(bad[0].b.inner, 30)}")`);
    const good = values.filter((x) => x.v !== null);
    if (good.length === 0) continue;
    if (good.length > 1) problems.push(`${good.length} <${tag}> verdicts; the last one is used`);
    const last = good[good.length - 1];
    if (last.b.unclosed) problems.push(`unclosed <${tag}>`);
    const key = tag === 'exec_verify' ? 'exec' : 'memory';
    const judged = key === 'exec' ? state.executedAny : state.memoryAny;
    if (!judged) {
      problems.push(
        `<${tag}> without a preceding ${key === 'exec' ? 'exec_sql result' : 'memory_retrieve result'}; ` +
          `the verdict is ignored`,
      );
      continue;
    }
    out[key] = last.v as Verdict;
    given = true;
  }
  return { value: given ? out : null, given };
}

interface Read {
  sql: string | null;
  tool?: ToolName;
  problems: string[];
}

const MARKUP = new RegExp(`</?\\s*(?:${ALL_TAGS.join('|')})(?:\\s[^<>]*)?>`, 'gi');

function innerOf(block: TagBlock, problems: string[]): string {
  let inner = block.inner;
  if (block.nested) problems.push(`nested <${block.tag}> inside <${block.tag}>; the inner tags are removed`);
  else if (new RegExp(MARKUP.source, 'i').test(inner)) problems.push(`tags inside <${block.tag}> removed`);
  inner = inner.replace(MARKUP, ' ');
  return inner;
}

function isObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One <tool_call> body: {"name": "exec_sql" | "memory_retrieve", "arguments": {"code": "…"}}. */
function readToolCall(block: TagBlock): Read {
  const problems: string[] = [];
  let body = innerOf(block, problems);
  if (/^\s*```/.test(body)) {
    body = stripCodeFence(body).text;
    problems.push('code fence around the tool-call JSON removed');
  }
  const parsed = parseLenientJson(body);
  if (parsed.value === undefined) {
    const why = block.unclosed ? `unclosed <tool_call> and ` : '';
    return { sql: null, problems: [...problems, `${why}the tool call is not JSON (${parsed.error})`] };
  }
  if (block.unclosed) {
    // Without </tool_call> and with JSON that stops mid-way, the generation was cut off: running half a query helps no
    // one.
    if (parsed.tolerated.some((t) => t.startsWith('unclosed'))) {
      return {
        sql: null,
        problems: [...problems, `unclosed <tool_call> whose JSON is cut off (${parsed.tolerated.join(', ')})`],
      };
    }
    problems.push('unclosed <tool_call>; its JSON is complete, so the call is used');
  }
  for (const t of parsed.tolerated) problems.push(`tool-call JSON: ${t}`);
  let call = parsed.value;
  if (Array.isArray(call)) {
    problems.push(`tool call is a list of ${call.length}; the first is used`);
    call = call[0];
  }
  if (isObject(call) && isObject(call.function) && call.name === undefined) {
    problems.push('OpenAI-style {"function": {…}} wrapper read');
    call = call.function;
  }
  if (!isObject(call)) return { sql: null, problems: [...problems, 'the tool call is not a JSON object'] };
  const rawName = call.name;
  if (typeof rawName !== 'string')
    return {
      sql: null,
      problems: [...problems, 'the tool call has no "name"; the tools are exec_sql and memory_retrieve'],
    };
  const name = TOOL_NAMES.find((t) => t === rawName.trim().toLowerCase());
  if (!name)
    return {
      sql: null,
      problems: [...problems, `unknown tool "${excerpt(rawName, 40)}"; the tools are exec_sql and memory_retrieve`],
    };
  if (name !== rawName) problems.push(`tool name "${excerpt(rawName, 40)}" read as ${name}`);
  let args: JsonValue | undefined = call.arguments ?? call.parameters;
  if (call.arguments === undefined && call.parameters !== undefined) problems.push('"parameters" read as "arguments"');
  if (typeof args === 'string') {
    const inner = parseLenientJson(args);
    if (inner.value === undefined)
      return {
        sql: null,
        tool: name,
        problems: [...problems, `"arguments" is a string that is not JSON (${inner.error})`],
      };
    problems.push('"arguments" given as a JSON string', ...inner.tolerated.map((t) => `arguments JSON: ${t}`));
    args = inner.value;
  }
  if (!isObject(args))
    return { sql: null, tool: name, problems: [...problems, `${name} called without an "arguments" object`] };
  let code = args.code;
  if (code === undefined) {
    const alias = (['sql', 'query'] as const).find((k) => typeof args[k] === 'string');
    if (alias) {
      problems.push(`"${alias}" read as "code"`);
      code = args[alias];
    }
  }
  if (typeof code !== 'string')
    return { sql: null, tool: name, problems: [...problems, `${name} called without a "code" string`] };
  const cleaned = stripCodeFence(code);
  if (cleaned.fenced) problems.push('code fence inside "code" removed');
  if (cleaned.text === '')
    return { sql: null, tool: name, problems: [...problems, `${name} called with empty "code"`] };
  return { sql: cleaned.text, tool: name, problems };
}

/** The final SQL. An unclosed <answer_sql> is refused: with our stop handling it only happens when output was cut. */
function readAnswer(block: TagBlock): Read {
  const problems: string[] = [];
  if (block.unclosed) return { sql: null, problems: ['unclosed <answer_sql> (the answer may be cut off)'] };
  const unfenced = stripCodeFence(innerOf(block, problems));
  if (unfenced.fenced) problems.push('code fence inside <answer_sql> removed');
  // A leftover lone fence line (```) when the fence opened outside the tag, as in App. D.1's base-model answer.
  const sql = unfenced.text.replace(/^`{3,}\w*\s*|\s*`{3,}$/g, '').trim();
  if (sql === '') return { sql: null, problems: [...problems, 'empty <answer_sql>'] };
  return { sql, problems };
}
