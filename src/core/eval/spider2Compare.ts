// Spider 2.0's result check (xlang-ai/Spider2 spider2-lite/evaluation_suite/evaluate.py `compare_pandas_table`,
// `compare_multi_pandas_table`): every gold column, as a vector, must equal some predicted column; extra predicted
// columns are allowed, numbers match within an absolute 1e-2, NaN counts as 0. See docs/eval-modes.md.
import type { ResultTable } from './pyValues';
import { compareCodePoints, pyFloatRepr } from './pyValues';
import { type PdFrame, type PdValue, columnVectors, throughPandasCsv } from './pandasCsv';

interface Spider2Standard {
  /** Gold column positions that matter (`condition_cols`); empty or absent: every gold column. */
  conditionCols?: number[];
  /** Compare each column's values as sorted lists (`ignore_order`); otherwise row by row. */
  ignoreOrder?: boolean;
}

/** Why a Spider 2.0 comparison failed: a gold column no predicted column matches, or bad condition_cols. */
type Spider2Outcome = 'match' | 'row-count' | 'values' | 'bad-condition-cols';

const TOLERANCE = 1e-2;

/** `normalize`: pd.isna(value) → the int 0. */
function normalize(v: PdValue): PdValue {
  return v.k === 'float' && Number.isNaN(v.n) ? { k: 'int', n: 0 } : v;
}

const isNumber = (v: PdValue): boolean => v.k !== 'str';
const asFloat = (v: PdValue): number => (v.k === 'bool' ? (v.b ? 1 : 0) : v.k === 'str' ? Number.NaN : Number(v.n));

/** Python's str() of a value. */
function pyStr(v: PdValue): string {
  switch (v.k) {
    case 'str':
      return v.s;
    case 'bool':
      return v.b ? 'True' : 'False';
    case 'int':
      return v.n.toString();
    case 'float':
      return pyFloatRepr(v.n);
  }
}

/** The sort key `(x is None, str(x), isinstance(x, (int, float)))`: never None after normalize. */
function byKey(a: PdValue, b: PdValue): number {
  const c = compareCodePoints(pyStr(a), pyStr(b));
  return c !== 0 ? c : Number(isNumber(a)) - Number(isNumber(b));
}

/** math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-2). */
function isClose(a: number, b: number): boolean {
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const d = Math.abs(a - b);
  return d <= Math.max(1e-9 * Math.max(Math.abs(a), Math.abs(b)), TOLERANCE);
}

/** Python's `a != b` for two values of which at least one is a str. */
function pyEqual(a: PdValue, b: PdValue): boolean {
  return a.k === 'str' && b.k === 'str' && a.s === b.s;
}

/** `vectors_match`: same length, and value by value (sorted first when order is ignored) equal or close. */
function vectorsMatch(gold: PdValue[], pred: PdValue[], ignoreOrder: boolean): boolean {
  let g = gold.map(normalize),
    p = pred.map(normalize);
  if (ignoreOrder) {
    g = [...g].sort(byKey);
    p = [...p].sort(byKey);
  }
  if (g.length !== p.length) return false;
  for (let i = 0; i < g.length; i++) {
    const a = g[i],
      b = p[i];
    if (isNumber(a) && isNumber(b)) {
      if (!isClose(asFloat(a), asFloat(b))) return false;
    } else if (!pyEqual(a, b)) return false;
  }
  return true;
}

/** Gold column positions chosen by condition_cols (Python indexing: negative counts from the end). */
function chosenColumns(width: number, conditionCols: number[] | undefined): number[] | null {
  if (!conditionCols || conditionCols.length === 0) return Array.from({ length: width }, (_, i) => i);
  const out: number[] = [];
  for (const c of conditionCols) {
    const i = c < 0 ? width + c : c;
    if (!Number.isInteger(i) || i < 0 || i >= width) return null; // iloc raises; the official script scores 0
    out.push(i);
  }
  return out;
}

/** `compare_pandas_table` on frames already read back from CSV. */
function compareFrames(gold: PdFrame, pred: PdFrame, std: Spider2Standard): Spider2Outcome {
  const chosen = chosenColumns(gold.columns.length, std.conditionCols);
  if (!chosen) return 'bad-condition-cols';
  const goldVectors = columnVectors(gold, chosen);
  const predVectors = columnVectors(
    pred,
    pred.columns.map((_, i) => i),
  );
  for (const g of goldVectors) {
    if (!predVectors.some((p) => vectorsMatch(g, p, std.ignoreOrder ?? false))) {
      const rows = predVectors[0]?.length ?? 0;
      return rows !== g.length ? 'row-count' : 'values';
    }
  }
  return 'match';
}

function toPdFrame(t: ResultTable, width?: number): PdFrame {
  return throughPandasCsv(t.rows, width ?? t.rows[0]?.length ?? t.floatColumns.length, t.floatColumns);
}

/** `compare_multi_pandas_table`: the prediction matches if it matches any of the gold results. */
export function spider2Compare(golds: ResultTable[], pred: ResultTable, std: Spider2Standard): Spider2Outcome {
  const p = toPdFrame(pred);
  let first: Spider2Outcome | null = null;
  for (const g of golds) {
    const o = compareFrames(toPdFrame(g), p, std);
    if (o === 'match') return o;
    first ??= o;
  }
  return first ?? 'values';
}
