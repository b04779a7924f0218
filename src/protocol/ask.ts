// The Ask panel's message protocol, shared by the extension host (src/extension/ask) and the webview app
// (webview/ask/main.ts). The host owns the conversation and streams it as events; the app mirrors it with the same
// reducer (state.ts) and asks the host to act. Nothing here imports `vscode` or the DOM.
import { checkMessage, type MessageRules } from './validate';
import { GRID_RULES, gridMessageProblem, type GridToApp, type GridToHost } from './grid';
import type { WireCell } from '../core/db/resultExport';
import type { ActionKind, EpisodeEnd, MdpAction } from '../core/agent/types';
import type { PlanOutcome } from './plan';

/** A query result as the panel shows it (cells JSON-safe; rows capped by whoever ran it). */
export interface WireResult {
  ok: boolean;
  errorClass: string | null;
  error: string | null;
  columns: string[];
  rows: WireCell[][];
  /** Rows the statement produced (≥ rows.length when truncated). */
  rowCount: number;
  truncated: boolean;
  ms: number;
}

export interface TurnView {
  index: number;
  /** The one generation after the budget ran out, which must answer. */
  finalCall: boolean;
  /** The model's text: streamed so far, then the whole turn once it is parsed. */
  text: string;
  /** True once the protocol has read the turn (kind/sql/thought are then set). */
  parsed: boolean;
  kind: ActionKind | null;
  sql: string | null;
  thought: string | null;
  mdp: MdpAction[];
  problems: string[];
  exec: WireResult | null;
  /** What the environment told the model after this turn (the observation messages' text). */
  observation: string | null;
}

export interface ExchangeView {
  /** The trajectory id of this question's episode. */
  id: string;
  question: string;
  protocol: string;
  budget: number;
  /** The model that answered (absent in states saved before models were named). */
  model?: string;
  turns: TurnView[];
  running: boolean;
  end: EpisodeEnd | null;
  finalSql: string | null;
  error: string | null;
  /** The final SQL's result, as last run. */
  result: WireResult | null;
  resultRunning: boolean;
  /** Where the trajectory was saved, once it was. */
  savedTo: string | null;
  /** Wall time of the whole episode, ms, once it ended. */
  totalMs: number | null;
}

export interface AskState {
  db: { path: string; label: string } | null;
  exchanges: ExchangeView[];
  /** What the model backend is, for the header (e.g. "openai · qwen"). */
  model: string;
  /** The other conversations of this panel (switching database or New conversation keeps them), oldest first. */
  conversations?: ConversationSummary[];
}

/** One kept conversation, as the panel lists it to go back to. */
export interface ConversationSummary {
  db: { path: string; label: string };
  /** The first question, and how many there are. */
  first: string;
  questions: number;
  /**
   * Each question's trajectory id and whether its result was shown: what the app saves so that the list, too, comes
   * back after a window reload (rebuilt from the trajectory store, like the conversation on screen).
   */
  exchanges?: { id: string; hadResult: boolean }[];
}

/** What happens to one exchange, in order. Applied by the host to its copy and by the app to its own. */
export type ExchangeEvent =
  | {
      kind: 'start';
      id: string;
      question: string;
      protocol: string;
      budget: number;
      /** The model that answers, as the settings name it ("openai · qwen"). */
      model?: string;
    }
  | { kind: 'turn'; index: number; finalCall: boolean }
  | { kind: 'text'; index: number; delta: string }
  | {
      kind: 'action';
      index: number;
      text: string;
      action: { kind: ActionKind; sql: string | null; thought: string | null; mdp: MdpAction[]; problems: string[] };
    }
  | { kind: 'exec'; index: number; result: WireResult }
  | { kind: 'observation'; index: number; text: string }
  | { kind: 'end'; end: EpisodeEnd; finalSql: string | null; error: string | null; totalMs: number }
  | { kind: 'resultRunning' }
  | { kind: 'result'; result: WireResult }
  | { kind: 'saved'; path: string };

/**
 * What the app keeps across hide/show and a window reload (VS Code's webview state). After a reload the host rebuilds
 * the conversation from it (src/protocol/restore.ts says which fields it reads).
 */
export interface AskAppState {
  state: AskState;
  draft: string;
  /** Which <details> the user opened, so hide/show keeps them open. */
  open: string[];
}

/** Host → app. */
export type ToApp =
  | { type: 'state'; state: AskState }
  | { type: 'event'; exchange: number; event: ExchangeEvent }
  | { type: 'notice'; level: 'info' | 'error'; text: string }
  | { type: 'focusInput'; text?: string }
  /** A page (or export progress) of exchange `exchange`'s final result, paged by the host over the whole result. */
  | { type: 'grid'; exchange: number; message: GridToApp }
  /** The query plan of exchange `exchange`'s final SQL (`sql`), asked for with its Plan button. */
  | { type: 'plan'; exchange: number; sql: string; outcome: PlanOutcome };

/** App → host. Every one is checked with ASK_RULES plus askMessageProblem before the host acts. */
export type ToHost =
  | { type: 'ready' }
  | { type: 'ask'; question: string }
  | { type: 'stop' }
  | { type: 'run'; exchange: number }
  | { type: 'openSql'; exchange: number }
  | { type: 'insertSql'; exchange: number }
  | { type: 'copySql'; exchange: number }
  | { type: 'saveTrajectory'; exchange: number }
  | { type: 'saveTrajectoryAs'; exchange: number }
  | { type: 'label'; exchange: number }
  /** EXPLAIN QUERY PLAN of exchange `exchange`'s final SQL, through the sandbox. */
  | { type: 'plan'; exchange: number }
  /**
   * The paged grid of exchange `exchange`'s final result asks for a page, an export, a copy (a GridToHost message,
   * checked by the grid session with GRID_RULES: the whole result is paged, sorted and filtered in SQLite).
   */
  | { type: 'grid'; exchange: number; message: Record<string, unknown> }
  | { type: 'copyText'; text: string }
  | { type: 'changeDb' }
  | { type: 'newConversation' }
  | { type: 'openConversation'; index: number };

export const ASK_RULES: MessageRules<ToHost> = {
  ready: {},
  ask: { question: 'string' },
  stop: {},
  run: { exchange: 'number' },
  openSql: { exchange: 'number' },
  insertSql: { exchange: 'number' },
  copySql: { exchange: 'number' },
  saveTrajectory: { exchange: 'number' },
  saveTrajectoryAs: { exchange: 'number' },
  label: { exchange: 'number' },
  plan: { exchange: 'number' },
  grid: { exchange: 'number', message: 'object' },
  copyText: { text: 'string' },
  changeDb: {},
  newConversation: {},
  openConversation: { index: 'number' },
};

export const MAX_QUESTION_CHARS = 4000;
const MAX_COPY_CHARS = 20_000_000;

/**
 * What the field types alone cannot say: an exchange index must name an exchange that exists, a question must have
 * text and a sane length, a grid message must be one the paged grid sends. Null when the message is fine.
 */
export function askMessageProblem(msg: ToHost, exchanges: number): string | null {
  if ('exchange' in msg) {
    if (!Number.isInteger(msg.exchange) || msg.exchange < 0 || msg.exchange >= exchanges) {
      return `${msg.type}: exchange ${msg.exchange} does not exist (there are ${exchanges})`;
    }
  }
  if (msg.type === 'ask') {
    if (msg.question.trim() === '') return 'ask: the question is empty';
    if (msg.question.length > MAX_QUESTION_CHARS)
      return `ask: the question is longer than ${MAX_QUESTION_CHARS} characters`;
  }
  if (msg.type === 'grid') {
    const inner = checkMessage<GridToHost>(msg.message, GRID_RULES);
    const problem = inner.ok ? gridMessageProblem(inner.message) : inner.error;
    if (problem) return `grid: ${problem}`;
  }
  if (msg.type === 'copyText' && msg.text.length > MAX_COPY_CHARS)
    return `copyText: more than ${MAX_COPY_CHARS} characters`;
  return null;
}
