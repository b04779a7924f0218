// Turns an ExecResult into the text a model sees, in the formats published text-to-SQL agents were trained on.
import type { Cell, ExecResult, StorageSet } from './types';
import { longest } from '../util/extent';

/**
 * - `df`: pandas DataFrame.to_string() (SkyRL-SQL, SQL-Trail): index column, right-aligned columns, NaN/None.
 * - `table`: an ASCII grid (the SkyRL-SQL appendix example, drawn consistently).
 * - `json`: {"columns": [...], "data": [records]} with at most `jsonRecords` records (MTIR-SQL's tool, 10).
 * - `text`: Python's str() of the fetched list of tuples cut to `textChars` characters (MTSQL-R1's exec_sql, 200).
 */
export type ObservationFormat = 'df' | 'table' | 'json' | 'text';
export const OBSERVATION_FORMATS: readonly ObservationFormat[] = ['df', 'table', 'json', 'text'];

/** SkyRL-SQL's threshold: longer observations are cut (first to 50 rows, then to this many characters). */
export const DEFAULT_OBSERVATION_CHARS = 9000;
const ROWS_WHEN_TOO_LONG = 50;

interface ObservationOptions {
  format?: ObservationFormat;
  /** Total characters of the observation, truncation note included. Default 9000. */
  maxChars?: number;
  /** Records in the `json` format. Default 10. */
  jsonRecords?: number;
  /** Characters of the `text` format. Default 200. */
  textChars?: number;
}

type ColumnKind = 'int' | 'float' | 'object';

/**
 * The dtype pandas infers from what Python's sqlite3 returns: ints → int64, ints/floats/None → float64, else object.
 */
function kindOf(s: StorageSet | undefined, values: Cell[]): ColumnKind {
  const st = s ?? {
    integer: values.some((v) => typeof v === 'bigint' || (typeof v === 'number' && Number.isInteger(v))),
    real: values.some((v) => typeof v === 'number' && !Number.isInteger(v)),
    text: values.some((v) => typeof v === 'string'),
    blob: values.some((v) => v instanceof Uint8Array),
    null: values.some((v) => v === null),
  };
  if (st.text || st.blob) return 'object';
  if (st.integer && !st.real && !st.null) return 'int';
  if ((st.integer || st.real) && values.length > 0) return 'float';
  return 'object';
}

function blobText(b: Uint8Array): string {
  return `<blob ${b.length} bytes>`;
}

/** Python's repr() of a float: shortest round-trip digits, always with a decimal point or exponent. */
function pyFloat(v: number): string {
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  const abs = Math.abs(v);
  if (abs !== 0 && (abs >= 1e16 || abs < 1e-4)) {
    const [m, e] = v.toExponential().split('e');
    const exp = Number(e);
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const s = String(v);
  return /[.e]/.test(s) ? s : s + '.0';
}

/**
 * pandas formats a float64 column with up to 6 decimals, trimmed to the longest needed by any value (at least 1),
 * switching the whole column to 6-digit scientific notation when a value is above 1e6 or below 1e-6.
 */
function pandasFloats(values: Cell[]): string[] {
  const nums = values.map((v) => (v === null ? null : Number(v)));
  const finite = nums.filter((v): v is number => v !== null && Number.isFinite(v));
  const big = finite.some((v) => Math.abs(v) > 1e6);
  const tiny = finite.some((v) => v !== 0 && Math.abs(v) < 1e-6);
  if (big || tiny) {
    return nums.map((v) => (v === null ? 'NaN' : v.toExponential(6).replace(/e([+-])(\d)$/, 'e$10$2')));
  }
  let decimals = 1;
  for (const v of finite) {
    const frac = v.toFixed(6).split('.')[1].replace(/0+$/, '');
    decimals = Math.max(decimals, frac.length);
  }
  return nums.map((v) => (v === null ? 'NaN' : Number.isNaN(v) ? 'NaN' : v.toFixed(decimals)));
}

function objectCell(v: Cell, kindIsFloatish: boolean): string {
  if (v === null) return 'None';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return kindIsFloatish ? pyFloat(v) : String(v);
  if (typeof v === 'string') return v;
  return blobText(v);
}

function renderDf(r: ExecResult, rows: Cell[][]): string {
  if (rows.length === 0) return `Empty DataFrame\nColumns: [${r.columns.join(', ')}]\nIndex: []`;
  const cols = r.columns.map((name, c) => {
    const values = rows.map((row) => row[c]);
    const storage = r.columnStorage?.[c];
    const kind = kindOf(storage, values);
    const onlyReals = !!storage && storage.real && !storage.integer;
    const cells =
      kind === 'float'
        ? pandasFloats(values)
        : values.map((v) => objectCell(v, onlyReals || (typeof v === 'number' && !Number.isInteger(v))));
    // pandas gives every value a leading space (the sign position for numbers), then joins columns with one space.
    // Numeric headers get that leading space too; object (text, mixed) headers do not.
    const spaced = cells.map((s) => (kind !== 'object' && s.startsWith('-') ? s : ' ' + s));
    const header = kind === 'object' ? name : ' ' + name;
    const width = longest(spaced, header.length);
    return { name: header, cells: spaced, width };
  });
  const labels = rows.map((_, i) => String(i));
  const indexWidth = longest(labels);
  const lines = [' '.repeat(indexWidth) + cols.map((c) => ' ' + c.name.padStart(c.width)).join('')];
  rows.forEach((_, i) => {
    lines.push(labels[i].padEnd(indexWidth) + cols.map((c) => ' ' + c.cells[i].padStart(c.width)).join(''));
  });
  return lines.join('\n');
}

function plainCell(v: Cell): string {
  if (v === null) return 'NULL';
  if (v instanceof Uint8Array) return blobText(v);
  return String(v);
}

function renderTable(r: ExecResult, rows: Cell[][]): string {
  const cells = rows.map((row) => row.map((v) => plainCell(v).replace(/\r?\n/g, ' ')));
  const widths = r.columns.map((name, c) =>
    longest(
      cells.map((row) => row[c]),
      name.length,
    ),
  );
  const rule = '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+';
  const line = (vals: string[]) => '| ' + vals.map((v, c) => v.padEnd(widths[c])).join(' | ') + ' |';
  return [rule, line(r.columns), rule, ...cells.map(line), rule].join('\n');
}

function jsonValue(v: Cell): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return blobText(v);
  return v;
}

/** JSON laid out as Python's json.dumps does by default (", " and ": " separators, non-ASCII kept). */
function pyJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(pyJson).join(', ') + ']';
  if (value && typeof value === 'object') {
    return (
      '{' +
      Object.entries(value)
        .map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`)
        .join(', ') +
      '}'
    );
  }
  if (typeof value === 'number' && !Number.isFinite(value))
    return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  return JSON.stringify(value);
}

function renderJson(r: ExecResult, records: number): string {
  const data = r.rows
    .slice(0, records)
    .map((row) => Object.fromEntries(r.columns.map((c, i) => [c, jsonValue(row[i])])));
  const out: Record<string, unknown> = { columns: r.columns, data };
  if (r.rowCount > data.length) out.total_rows = r.rowCount;
  return pyJson(out);
}

/** Python's repr() of a str. */
function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = '';
  for (const ch of s) {
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)
      out += '\\x' + ch.charCodeAt(0).toString(16).padStart(2, '0');
    else out += ch;
  }
  return quote + out + quote;
}

function renderText(r: ExecResult, chars: number): string {
  const onlyReal = (c: number) => !!r.columnStorage?.[c] && r.columnStorage[c].real && !r.columnStorage[c].integer;
  const tuple = (row: Cell[]) => {
    const parts = row.map((v, c) => {
      if (v === null) return 'None';
      if (typeof v === 'string') return pyStr(v);
      if (typeof v === 'number') return Number.isInteger(v) && !onlyReal(c) ? String(v) : pyFloat(v);
      if (typeof v === 'bigint') return v.toString();
      return blobText(v);
    });
    return '(' + parts.join(', ') + (parts.length === 1 ? ',' : '') + ')';
  };
  return ('[' + r.rows.map(tuple).join(', ') + ']').slice(0, chars);
}

function renderError(r: ExecResult): string {
  return r.error ?? 'error';
}

/** Cuts `text` so that it and its note fit in `max` characters. */
function cap(text: string, max: number, note: string): string {
  if (text.length <= max) return text;
  const tail = `\n... (${note})`;
  return text.slice(0, Math.max(0, max - tail.length)) + tail;
}

export function renderObservation(r: ExecResult, opts: ObservationOptions = {}): string {
  const format = opts.format ?? 'df';
  const maxChars = opts.maxChars ?? DEFAULT_OBSERVATION_CHARS;
  if (!r.ok) return cap(renderError(r), maxChars, `truncated to ${maxChars} characters`);
  if (format === 'json')
    return cap(renderJson(r, opts.jsonRecords ?? 10), maxChars, `truncated to ${maxChars} characters`);
  if (format === 'text')
    return cap(renderText(r, opts.textChars ?? 200), maxChars, `truncated to ${maxChars} characters`);
  const render = format === 'table' ? renderTable : renderDf;
  let rows = r.rows;
  let text = render(r, rows);
  if (text.length > maxChars && rows.length > ROWS_WHEN_TOO_LONG) {
    rows = rows.slice(0, ROWS_WHEN_TOO_LONG);
    text = render(r, rows);
  }
  const shown = rows.length;
  const note =
    r.rowCount > shown ? `showing ${shown} of ${r.rowCount}${r.rowCountExact === false ? '+' : ''} rows` : '';
  if (text.length > maxChars)
    return cap(text, maxChars, `${note ? note + '; ' : ''}truncated to ${maxChars} characters`);
  return note ? cap(`${text}\n... (${note})`, maxChars, note) : text;
}
