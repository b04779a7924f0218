// The Query Results panel's messages, shared by the host (src/extension/results/panel.ts) and the app
// (webview/results/main.ts): which statement ran against which database, then the paged grid's pages, or the error
// in SQLite's words (a rejected write says Quarry is read-only). Nothing here imports `vscode` or the DOM.
import { GRID_RULES, gridMessageProblem, type GridFilter, type GridToApp, type GridToHost } from './grid';
import type { MessageRules } from './validate';
import type { PlanOutcome } from './plan';

interface RunInfo {
  /** "clinic.sqlite" */
  db: string;
  /** The database file's full path (the app keeps it, so the panel can come back after a window reload). */
  path: string;
  sql: string;
}

/** The page the grid shows: where, sorted how, filtered how (what a `page` request asks for). */
export interface GridView {
  offset: number;
  limit: number;
  sortColumn?: number;
  descending?: boolean;
  filters: GridFilter[];
}

/**
 * What the app keeps (VS Code's webview state): the statement, its database, and the page shown, so after a window
 * reload the host runs it again on the same page, sort and filters (src/protocol/restore.ts checks it).
 */
export interface ResultsAppState {
  path: string;
  sql: string;
  view?: GridView;
}

/** Host → app. */
export type ToApp =
  | ({ type: 'running' } & RunInfo)
  | ({ type: 'failed'; errorClass: string; message: string } & RunInfo)
  | ({ type: 'shown' } & RunInfo)
  /** The statement's EXPLAIN QUERY PLAN, asked for with the Plan button (the `plan` message). */
  | { type: 'plan'; sql: string; outcome: PlanOutcome }
  | GridToApp;

/** App → host. */
export type ToHost = { type: 'ready' } | { type: 'rerun' } | { type: 'plan' } | GridToHost;

export const RESULTS_RULES: MessageRules<ToHost> = { ready: {}, rerun: {}, plan: {}, ...GRID_RULES };

export function resultsMessageProblem(m: ToHost): string | null {
  if (m.type === 'ready' || m.type === 'rerun' || m.type === 'plan') return null;
  return gridMessageProblem(m);
}

/** The sentence a failed run shows: SQLite's words, and for a rejected statement why Quarry refused it. */
export function failureText(errorClass: string | null, message: string): string {
  if (errorClass === 'rejected')
    return `Rejected: Quarry runs every query read-only in its sandbox, so this statement was not run. (${message})`;
  if (errorClass === 'timeout') return `Stopped: ${message}`;
  return `${errorClass === 'sql' ? 'SQL error' : 'Error'}: ${message}`;
}
