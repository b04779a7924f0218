// The paged result grid's messages, shared by every panel that shows a whole result a page at a time (Preview Table,
// Query Results, Ask's final results, Labeling's corrected SQL): the app asks for a page (offset, sort, filters), the
// host runs it through the sandbox and answers with the page and the total. Nothing here imports `vscode` or the DOM.
import type { WireCell } from '../core/db/resultExport';
import type { MessageRules } from './validate';

export interface GridFilter {
  column: number;
  text: string;
}

/** One page as the app shows it. */
export interface WirePage {
  columns: string[];
  rows: WireCell[][];
  /** Columns whose numbers are REAL: an integral value is shown as 14.0. */
  realColumns: boolean[];
  offset: number;
  limit: number;
  /** Rows of the whole result after the filters; null when they could not be counted (notes say why). */
  total: number | null;
  /** False when SQLite cannot page the statement (PRAGMA, EXPLAIN): no sorting or filters. */
  pageable: boolean;
  sortColumn: number | null;
  descending: boolean;
  filters: GridFilter[];
  /** Everything cut or left out, in words. */
  notes: string[];
  ms: number;
}

/** Host → app. */
export type GridToApp =
  | { type: 'page'; page: WirePage }
  | { type: 'pageError'; message: string }
  | { type: 'exportProgress'; done: number; total: number | null; finished: boolean; message?: string };

/** App → host. */
export type GridToHost =
  | { type: 'page'; offset: number; limit: number; sortColumn?: number; descending?: boolean; filters: GridFilter[] }
  | { type: 'export'; format: string }
  | { type: 'cancelExport' }
  | { type: 'copyText'; text: string };

export const GRID_RULES: MessageRules<GridToHost> = {
  page: { offset: 'number', limit: 'number', sortColumn: 'number?', descending: 'boolean?', filters: 'array' },
  export: { format: 'string' },
  cancelExport: {},
  copyText: { text: 'string' },
};

/** Rows one page may ask for. */
const MAX_PAGE_ROWS = 1000;

/** What the rules cannot say: sane numbers, well-formed filters, a known export format, copied text of sane size. */
export function gridMessageProblem(m: GridToHost): string | null {
  if (m.type === 'page') {
    if (!Number.isInteger(m.offset) || m.offset < 0) return 'page: offset must be a whole number ≥ 0';
    if (!Number.isInteger(m.limit) || m.limit < 1 || m.limit > MAX_PAGE_ROWS)
      return `page: limit must be 1–${MAX_PAGE_ROWS}`;
    if (m.sortColumn !== undefined && (!Number.isInteger(m.sortColumn) || m.sortColumn < 0))
      return 'page: sortColumn must be a column index';
    if (m.filters.length > 1000) return 'page: too many filters';
    for (const f of m.filters as unknown[]) {
      const o = f as GridFilter | null;
      if (!o || typeof o !== 'object' || !Number.isInteger(o.column) || o.column < 0 || typeof o.text !== 'string')
        return 'page: each filter needs a column index and a text';
      if (o.text.length > 1000) return 'page: a filter text is too long';
    }
  }
  if (m.type === 'export' && m.format !== 'csv' && m.format !== 'json' && m.format !== 'markdown')
    return `export: unknown format ${JSON.stringify(m.format)}`;
  if (m.type === 'copyText' && m.text.length > 64 * 2 ** 20) return 'copyText: text too large';
  return null;
}
