// The table preview's message protocol, shared by the host (src/extension/preview/panel.ts) and the app
// (webview/preview/main.ts). The host pages the whole table through the sandbox (src/protocol/grid.ts) and the app
// shows each page in the shared paged grid. Nothing here imports `vscode` or the DOM.
import { GRID_RULES, gridMessageProblem, type GridToApp, type GridToHost } from './grid';
import type { MessageRules } from './validate';

/** Which table of which database a preview shows. */
interface PreviewTarget {
  /** "bookshop.sqlite" */
  db: string;
  /** The database file's full path (the app keeps it, so the panel can come back after a window reload). */
  path: string;
  table: string;
}

/** Host → app: the table shown, then the grid's pages (or an error). */
export type ToApp =
  | ({ type: 'loading' } & PreviewTarget)
  | ({ type: 'error'; message: string } & PreviewTarget)
  | ({ type: 'shown' } & PreviewTarget)
  | GridToApp;

/** What the app keeps (VS Code's webview state): which table of which database it shows, for a window reload. */
export interface PreviewAppState {
  path: string;
  table: string;
}

/** App → host. */
export type ToHost = { type: 'ready' } | { type: 'refresh' } | GridToHost;

export const PREVIEW_RULES: MessageRules<ToHost> = {
  ready: {},
  refresh: {},
  ...GRID_RULES,
};

/** What the rules cannot say (the grid's checks). */
export function previewMessageProblem(m: ToHost): string | null {
  if (m.type === 'ready' || m.type === 'refresh') return null;
  return gridMessageProblem(m);
}
