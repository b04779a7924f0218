// Query results as text other programs read: CSV (RFC 4180), TSV for the clipboard (spreadsheets paste it into
// cells), JSON records, and the JSON-safe cells a webview can be sent. Pure functions with no Node imports, so the
// webview apps and the extension host share them.
import type { Cell } from './types';

/** A cell that survives JSON: bigint becomes its exact digits, a blob its hex literal, a non-finite number its text. */
export type WireCell = null | number | string;

const HEX = '0123456789abcdef';
function hex(bytes: Uint8Array, max = Infinity): string {
  let s = '';
  const n = Math.min(bytes.length, max);
  for (let i = 0; i < n; i++) s += HEX[bytes[i] >> 4] + HEX[bytes[i] & 15];
  return s;
}

/** Bytes of a blob shown in a webview cell; the rest is marked as cut. */
export const WIRE_BLOB_BYTES = 64;

export function wireCell(c: Cell | WireCell): WireCell {
  if (c === null || typeof c === 'string') return c;
  if (typeof c === 'number') return Number.isFinite(c) ? c : String(c);
  if (typeof c === 'bigint') return c.toString();
  return `x'${hex(c, WIRE_BLOB_BYTES)}'${c.length > WIRE_BLOB_BYTES ? `… (${c.length} bytes)` : ''}`;
}

export function wireRows(rows: readonly (readonly (Cell | WireCell)[])[]): WireCell[][] {
  return rows.map((r) => r.map(wireCell));
}

/** A cell as plain text: NULL is empty, a blob its hex digits, numbers as JavaScript prints them. */
export function cellText(c: Cell | WireCell): string {
  if (c === null) return '';
  if (c instanceof Uint8Array) return hex(c);
  return String(c);
}

function csvField(s: string): string {
  // An empty text is written quoted (""), so it stays apart from NULL, which is an empty field.
  return s === '' || /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * Rows whose cells carry their SQLite type (`integersAsBigint`: every INTEGER a bigint, so a JS number is a REAL) are
 * written `typed`: a REAL keeps its type, 14.0 rather than 14, so a reader (Python's csv + float, pandas, SQLite's
 * .import) gets a REAL back. Untyped rows (integers as numbers) are written as JavaScript prints numbers.
 */
interface ExportOptions {
  typed?: boolean;
}

/** How a REAL is written so that it reads back as one: 14.0, not 14 (1e21 and beyond already have an exponent). */
export function realText(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 1e21 ? `${v}.0` : String(v);
}

/** A cell's text in an export: REALs keep their type when the rows are typed. */
function exportText(c: Cell | WireCell, typed: boolean): string {
  return typed && typeof c === 'number' ? realText(c) : cellText(c);
}

/** RFC 4180 CSV with a header row and CRLF line ends; NULL is an empty field, the empty text `""`. */
export function toCsv(
  columns: readonly string[],
  rows: readonly (readonly (Cell | WireCell)[])[],
  opts: ExportOptions = {},
): string {
  const typed = opts.typed === true;
  const lines = [columns.map(csvField).join(',')];
  for (const r of rows) lines.push(r.map((c) => (c === null ? '' : csvField(exportText(c, typed)))).join(','));
  return lines.join('\r\n') + '\r\n';
}

/** Tab-separated with a header row; tabs and line breaks inside cells become spaces so every row stays one line. */
export function toTsv(columns: readonly string[], rows: readonly (readonly (Cell | WireCell)[])[]): string {
  const clean = (s: string) => s.replace(/[\t\r\n]+/g, ' ');
  return (
    [columns.map(clean).join('\t'), ...rows.map((r) => r.map((c) => clean(cellText(c))).join('\t'))].join('\n') + '\n'
  );
}

/**
 * JSON: an array of one object per row. Duplicate column names (`SELECT a, a`) get `_2`, `_3` suffixes so no value
 * is lost; integers beyond 2^53 stay exact as strings; blobs are hex strings; typed rows write a REAL as 14.0 (a
 * JSON number all the same, which Python's json reads back as a float).
 */
export function toJsonRecords(
  columns: readonly string[],
  rows: readonly (readonly (Cell | WireCell)[])[],
  opts: ExportOptions = {},
): string {
  const keys = uniqueKeys(columns).map((k) => JSON.stringify(k));
  const typed = opts.typed === true;
  const value = (c: Cell | WireCell): string => {
    if (typeof c === 'bigint') return JSON.stringify(jsonBigint(c));
    if (c instanceof Uint8Array) return JSON.stringify(hex(c));
    if (typed && typeof c === 'number' && Number.isFinite(c)) return realText(c);
    return JSON.stringify(wireCell(c));
  };
  if (rows.length === 0) return '[]\n';
  const out = rows.map((r) => `  {\n${keys.map((k, i) => `    ${k}: ${value(r[i] ?? null)}`).join(',\n')}\n  }`);
  return `[\n${out.join(',\n')}\n]\n`;
}

function jsonBigint(b: bigint): number | string {
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b.toString();
}

function uniqueKeys(columns: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return columns.map((c) => {
    const n = (seen.get(c) ?? 0) + 1;
    seen.set(c, n);
    return n === 1 ? c : `${c}_${n}`;
  });
}

const BIG_INT = /^-?\d{16,}$/;

/** SQLite's order of storage classes: NULL, numbers, text. Big integers arrive as digit strings and sort as numbers. */
function rank(v: WireCell): number {
  if (v === null) return 0;
  if (typeof v === 'number' || BIG_INT.test(v)) return 1;
  return 2;
}

/**
 * Orders two shown cells as a result grid sorts them: NULLs first, numbers numerically (exact beyond 2^53), then text.
 */
export function compareCells(a: WireCell, b: WireCell): number {
  const ra = rank(a),
    rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return 0;
  if (ra === 1) {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    const ba = typeof a === 'number' ? (Number.isInteger(a) ? BigInt(a) : null) : BigInt(a as string);
    const bb = typeof b === 'number' ? (Number.isInteger(b) ? BigInt(b) : null) : BigInt(b as string);
    if (ba !== null && bb !== null) return ba < bb ? -1 : ba > bb ? 1 : 0;
    return Number(a) - Number(b);
  }
  return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
}

interface RowOrder {
  column: number;
  descending: boolean;
}

/** Row indices in the grid's order for `order` (stable: ties keep the query's order), or the query's order. */
export function sortedRowIndices(rows: readonly (readonly (Cell | WireCell)[])[], order: RowOrder | null): number[] {
  const idx = rows.map((_, i) => i);
  if (!order) return idx;
  const keys = rows.map((r) => wireCell(r[order.column] ?? null));
  const dir = order.descending ? -1 : 1;
  return idx.sort((a, b) => compareCells(keys[a], keys[b]) * dir || a - b);
}

/** A Markdown table cell: pipes escaped, line breaks as <br>, NULL as the word NULL in italics. */
function markdownCell(c: Cell | WireCell, typed = false): string {
  if (c === null) return '*NULL*';
  return exportText(c, typed).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>');
}

/** A GitHub-flavoured Markdown table with a header row; numbers are right-aligned. */
export function toMarkdown(
  columns: readonly string[],
  rows: readonly (readonly (Cell | WireCell)[])[],
  opts: ExportOptions = {},
): string {
  return markdownHeader(columns, rows) + markdownRows(rows, opts.typed === true);
}

function markdownHeader(columns: readonly string[], rows: readonly (readonly (Cell | WireCell)[])[]): string {
  const numeric = columns.map(
    (_, i) => rows.some((r) => isNumberCell(r[i])) && rows.every((r) => r[i] === null || isNumberCell(r[i])),
  );
  return (
    `| ${columns.map((c) => markdownCell(c)).join(' | ')} |\n` +
    `| ${numeric.map((num) => (num ? '---:' : '---')).join(' | ')} |\n`
  );
}

function markdownRows(rows: readonly (readonly (Cell | WireCell)[])[], typed: boolean): string {
  return rows.map((r) => `| ${r.map((c) => markdownCell(c, typed)).join(' | ')} |\n`).join('');
}

function isNumberCell(c: Cell | WireCell): boolean {
  return typeof c === 'number' || typeof c === 'bigint';
}

export type ExportFormat = 'csv' | 'json' | 'markdown';
export const EXPORT_EXTENSIONS: Record<ExportFormat, string> = { csv: 'csv', json: 'json', markdown: 'md' };

/**
 * Writes a result chunk by chunk in one format, so an export of a whole table never holds it all: `chunk()` returns
 * the text for the next rows (the header comes with the first), `end()` what closes the file. The rows are typed
 * (`ResultPages.allRows`: integers as bigints), so a REAL is written as one (14.0) in every format.
 */
export class ExportText {
  private started = false;
  constructor(
    private readonly format: ExportFormat,
    private readonly columns: readonly string[],
  ) {}

  chunk(rows: readonly (readonly Cell[])[]): string {
    const first = !this.started;
    this.started = true;
    const typed = { typed: true };
    if (this.format === 'csv') {
      const text = toCsv(this.columns, rows, typed);
      return first ? text : text.slice(text.indexOf('\r\n') + 2);
    }
    if (this.format === 'markdown') return (first ? markdownHeader(this.columns, rows) : '') + markdownRows(rows, true);
    if (rows.length === 0) return first ? '[' : '';
    const body = toJsonRecords(this.columns, rows, typed).trim().slice(1, -1).replace(/\n$/, '');
    return (first ? '[' : ',') + body;
  }

  end(): string {
    if (this.format === 'json') return (this.started ? '' : '[') + '\n]\n';
    if (!this.started) return this.chunk([]);
    return '';
  }
}
