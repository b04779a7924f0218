// The table preview's message protocol, shared by the host (src/extension/databases/previewPanel.ts) and the app
// (webview/preview/main.ts). The host runs the query in the sandbox and sends the rows; the app shows them in the
// shared result grid. Nothing here imports `vscode` or the DOM.
import type { MessageRules } from './validate';
import type { WireCell } from '../core/db/resultExport';

export interface PreviewData {
  /** "bookshop.sqlite" */
  db: string;
  /** The database file's full path (the app keeps it, so the panel can come back after a window reload). */
  path: string;
  table: string;
  columns: string[];
  rows: WireCell[][];
  /** Rows the table has (or at least, when counting stopped); ≥ rows.length. */
  rowCount: number;
  truncated: boolean;
  ms: number;
}

/** Host → app. */
export type ToApp =
  | { type: 'loading'; db: string; path: string; table: string }
  | { type: 'show'; data: PreviewData }
  | { type: 'error'; db: string; path: string; table: string; message: string };

/** What the app keeps (VS Code's webview state): which table of which database it shows, for a window reload. */
export interface PreviewAppState {
  path: string;
  table: string;
}

/** App → host. */
export type ToHost =
  | { type: 'ready' }
  | { type: 'refresh' }
  | { type: 'copyText'; text: string }
  | { type: 'export'; format: string };

export const PREVIEW_RULES: MessageRules<ToHost> = {
  ready: {},
  refresh: {},
  copyText: { text: 'string' },
  export: { format: 'string' },
};

/** What the rules cannot say: the export format is one of two, copied text has a sane size. */
export function previewMessageProblem(m: ToHost): string | null {
  if (m.type === 'export' && m.format !== 'csv' && m.format !== 'json')
    return `export: unknown format ${JSON.stringify(m.format)}`;
  if (m.type === 'copyText' && m.text.length > 64 * 2 ** 20) return 'copyText: text too large';
  return null;
}
