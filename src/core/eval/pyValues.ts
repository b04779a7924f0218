// Python value semantics for result cells, so comparisons score what Python's sqlite3 + tuples/sets would score.
// Python's `1 == 1.0` is True and both hash alike, so equality keys ignore int vs float; but the official
// Spider comparator sorts cells by `str(x) + str(type(x))`, where `1` and `1.0` differ, so sort keys keep the type.
import type { Cell, ExecResult } from '../db/types';

/** A result as the comparators see it: rows plus, per column, whether SQLite returned REAL (Python float) values. */
export interface ResultTable {
  rows: Cell[][];
  /** Per column: true when its numbers are Python floats (REAL storage, no INTEGER seen). */
  floatColumns: boolean[];
}

export function toResultTable(r: ExecResult): ResultTable {
  const width = r.rows[0]?.length ?? r.columns.length;
  const floatColumns = Array.from({ length: width }, (_, i) => {
    const s = r.columnStorage?.[i];
    // A column holding both INTEGER and REAL cells cannot be told apart per cell here; integral values count as int.
    return s ? s.real && !s.integer : false;
  });
  return { rows: r.rows, floatColumns };
}

/** A string equal for two cells exactly when Python's `==` (and hash) says they are equal. */
export function cellKey(v: Cell): string {
  if (v === null) return 'N';
  if (typeof v === 'string') return 's' + v;
  if (typeof v === 'bigint') return 'i' + v.toString();
  if (typeof v === 'number') {
    // Safe integers print the same digits as BigInt(v) does, without making one.
    if (Number.isSafeInteger(v)) return 'i' + String(v);
    return Number.isInteger(v) ? 'i' + BigInt(v).toString() : 'f' + String(v);
  }
  return 'b' + Buffer.from(v).toString('hex');
}

/** A string equal for two rows exactly when Python's tuple `==` says they are equal. */
export function rowKey(row: Cell[]): string {
  let k = '';
  for (const c of row) {
    const ck = cellKey(c);
    k += ck.length + ':' + ck;
  }
  return k;
}

/** Python's repr of a float: shortest round-trip digits, exponent form outside 1e-4 <= |x| < 1e16. */
export function pyFloatRepr(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mant, expText] = x.toExponential().split('e');
  const exp = Number(expText);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  let out: string;
  if (exp >= -5 + 1 && exp < 16) {
    if (exp < 0) out = '0.' + '0'.repeat(-exp - 1) + digits;
    else if (digits.length <= exp + 1) out = digits + '0'.repeat(exp + 1 - digits.length) + '.0';
    else out = digits.slice(0, exp + 1) + '.' + digits.slice(exp + 1);
  } else {
    const m = digits.length > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    const e = Math.abs(exp);
    out = m + 'e' + (exp < 0 ? '-' : '+') + (e < 10 ? '0' + e : String(e));
  }
  return (neg ? '-' : '') + out;
}

/** Python's repr of bytes (b'...'), which is what str() gives for a BLOB. */
export function pyBytesRepr(b: Uint8Array): string {
  let hasSingle = false,
    hasDouble = false;
  for (const c of b) {
    if (c === 0x27) hasSingle = true;
    if (c === 0x22) hasDouble = true;
  }
  const q = hasSingle && !hasDouble ? '"' : "'";
  let s = 'b' + q;
  for (const c of b) {
    if (c === 0x5c) s += '\\\\';
    else if (c === 0x09) s += '\\t';
    else if (c === 0x0a) s += '\\n';
    else if (c === 0x0d) s += '\\r';
    else if (c === q.charCodeAt(0)) s += '\\' + q;
    else if (c < 0x20 || c >= 0x7f) s += '\\x' + c.toString(16).padStart(2, '0');
    else s += String.fromCharCode(c);
  }
  return s + q;
}

/** `str(x) + str(type(x))` — the sort key of the official `unorder_row`. */
export function pySortKey(v: Cell, isFloat: boolean): string {
  if (v === null) return "None<class 'NoneType'>";
  if (typeof v === 'string') return v + "<class 'str'>";
  if (typeof v === 'bigint') return v.toString() + "<class 'int'>";
  if (typeof v === 'number') {
    if (isFloat || !Number.isInteger(v)) return pyFloatRepr(v) + "<class 'float'>";
    return String(v) + "<class 'int'>";
  }
  return pyBytesRepr(v) + "<class 'bytes'>";
}

/** Python compares str by code point; JS `<` compares UTF-16 units, which differs only beyond the BMP. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i),
      y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff,
      ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** The official `unorder_row`: a row's cells sorted by their Python sort key (stable, like `sorted`). */
export function unorderRow(row: Cell[], floatColumns: boolean[]): Cell[] {
  const keyed = row.map((v, i) => ({ v, k: pySortKey(v, floatColumns[i] ?? false) }));
  keyed.sort((a, b) => compareCodePoints(a.k, b.k));
  return keyed.map((x) => x.v);
}
