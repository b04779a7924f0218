// The values a SQLite result holds after Spider 2.0's trip through pandas: `pd.read_sql_query(..., chunksize=500)`,
// each chunk appended with `DataFrame.to_csv`, the file read back with `pd.read_csv` (spider2-lite
// evaluation_suite/evaluate.py `get_sqlite_result`, `evaluate_single_sql_instance`). The trip decides the types the
// comparator sees: "007" comes back as the int 7, "NULL" and "" as NaN, a column mixing text and numbers as text.
import type { Cell } from '../db/types';
import { pyBytesRepr, pyFloatRepr } from './pyValues';

/** A value as pandas hands it out: int, float (NaN included), bool or str. */
export type PdValue =
  | { k: 'int'; n: number | bigint }
  | { k: 'float'; n: number }
  | { k: 'bool'; b: boolean }
  | { k: 'str'; s: string };

/** A frame's columns after the CSV trip, each a list of values (missing cells are float NaN). */
export interface PdFrame {
  columns: PdValue[][];
  /** The numpy dtype of each column: int64, float64, bool or object (text). */
  dtypes: ('int' | 'float' | 'bool' | 'object')[];
}

/** Rows `read_sql_query` puts in one chunk. */
const CHUNK = 500;

/** pandas' default `na_values` of read_csv: these cell texts read back as NaN. */
const NA_TEXT = new Set([
  '',
  '#N/A',
  '#N/A N/A',
  '#NA',
  '-1.#IND',
  '-1.#QNAN',
  '-NaN',
  '-nan',
  '1.#IND',
  '1.#QNAN',
  '<NA>',
  'N/A',
  'NA',
  'NULL',
  'NaN',
  'None',
  'n/a',
  'nan',
  'null',
]);
const BOOL_TEXT: Record<string, boolean> = {
  True: true,
  TRUE: true,
  true: true,
  False: false,
  FALSE: false,
  false: false,
};
const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INF_RE = /^[+-]?(inf|infinity)$/i;

/**
 * How `to_csv` writes one column of one chunk. `read_sql_query` types the chunk's column from its cells: all
 * integers → int64; numbers with a REAL or a NULL among them → float64 (every number written as a float, NULL as
 * ""); any text or blob → object (each cell written as Python's str(), NULL as ""). `isFloat` says the column's
 * numbers are REALs (SQLite storage), which the cells alone cannot tell for integral values.
 */
function chunkColumnText(cells: Cell[], isFloat: boolean): string[] {
  const object = cells.some((c) => typeof c === 'string' || c instanceof Uint8Array);
  const allNull = cells.every((c) => c === null);
  const float =
    !object &&
    !allNull &&
    (isFloat || cells.some((c) => c === null || (typeof c === 'number' && !Number.isInteger(c))));
  return cells.map((c) => {
    if (c === null) return '';
    if (typeof c === 'string') return c;
    if (c instanceof Uint8Array) return pyBytesRepr(c);
    if (typeof c === 'bigint') return float ? pyFloatRepr(Number(c)) : c.toString();
    if (float || (isFloat && object) || !Number.isInteger(c)) return pyFloatRepr(c);
    return String(c);
  });
}

/** How `read_csv` types a column from its texts (the C parser's inference with default options). */
function readColumn(texts: string[]): { dtype: PdFrame['dtypes'][number]; values: PdValue[] } {
  const present = texts.filter((t) => !NA_TEXT.has(t));
  const nan: PdValue = { k: 'float', n: Number.NaN };
  if (present.length === 0) return { dtype: 'float', values: texts.map(() => nan) };
  if (present.every((t) => INT_RE.test(t))) {
    if (present.length === texts.length) {
      return {
        dtype: 'int',
        values: texts.map((t) => {
          const b = BigInt(t);
          return { k: 'int', n: Number.isSafeInteger(Number(b)) ? Number(b) : b };
        }),
      };
    }
    return { dtype: 'float', values: texts.map((t) => (NA_TEXT.has(t) ? nan : { k: 'float', n: Number(t) })) };
  }
  if (present.every((t) => FLOAT_RE.test(t) || INF_RE.test(t) || INT_RE.test(t))) {
    const num = (t: string) => (INF_RE.test(t) ? (t.startsWith('-') ? -Infinity : Infinity) : Number(t));
    return { dtype: 'float', values: texts.map((t) => (NA_TEXT.has(t) ? nan : { k: 'float', n: num(t) })) };
  }
  if (present.length === texts.length && present.every((t) => t in BOOL_TEXT)) {
    return { dtype: 'bool', values: texts.map((t) => ({ k: 'bool', b: BOOL_TEXT[t] })) };
  }
  return { dtype: 'object', values: texts.map((t) => (NA_TEXT.has(t) ? nan : { k: 'str', s: t })) };
}

/** A SQLite result as Spider 2.0's evaluator reads it back from its CSV file. */
export function throughPandasCsv(rows: Cell[][], width: number, floatColumns: boolean[]): PdFrame {
  const columns: PdValue[][] = [];
  const dtypes: PdFrame['dtypes'] = [];
  for (let c = 0; c < width; c++) {
    const texts: string[] = [];
    for (let start = 0; start < rows.length; start += CHUNK) {
      const cells = rows.slice(start, start + CHUNK).map((r) => r[c]);
      texts.push(...chunkColumnText(cells, floatColumns[c] ?? false));
    }
    const { dtype, values } = rows.length === 0 ? { dtype: 'object' as const, values: [] } : readColumn(texts);
    columns.push(values);
    dtypes.push(dtype);
  }
  return { columns, dtypes };
}

/**
 * The values `frame.transpose().values.tolist()` gives for the chosen columns: numpy finds one dtype for the whole
 * block, so in an all-numeric selection with a float64 column every int becomes a float; with text or bool mixed
 * in (object) each value keeps its own type.
 */
export function columnVectors(frame: PdFrame, chosen: number[]): PdValue[][] {
  const types = new Set(chosen.map((i) => frame.dtypes[i]));
  const toFloat = !types.has('object') && !types.has('bool') && types.has('float');
  return chosen.map((i) =>
    frame.columns[i].map((v) => (toFloat && v.k === 'int' ? { k: 'float', n: Number(v.n) } : v)),
  );
}
