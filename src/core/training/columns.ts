// The shape of a training table as nested columns (strings, 64-bit integers, booleans, structs, lists), so one
// description serves the Parquet writer (src/app/data/parquet.ts), the checks on each row before it is written, and
// docs/training.md. Pure data and pure functions: no I/O.

export type Column =
  | { name: string; kind: 'string' | 'int64' | 'bool'; optional?: boolean }
  | { name: string; kind: 'struct'; fields: Column[]; optional?: boolean }
  | { name: string; kind: 'list'; element: Column; optional?: boolean };

/** A row that does not fit its columns: the message names the column path (`extra_info.history[2].sql`). */
export class ColumnError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ColumnError';
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'missing';
  if (Array.isArray(v)) return 'a list';
  return typeof v;
}

/**
 * Checks `value` against `col` and returns it with every int64 as a bigint (what the Parquet writer takes) and every
 * absent optional value as null. Throws ColumnError naming the path of the first value that does not fit.
 */
export function normalizeValue(col: Column, value: unknown, path: string = col.name): unknown {
  if (value === undefined || value === null) {
    if (col.optional) return null;
    throw new ColumnError(`${path} is ${describe(value)}, but the column is required`);
  }
  switch (col.kind) {
    case 'string':
      if (typeof value !== 'string') throw new ColumnError(`${path} is ${describe(value)}, expected a string`);
      return value;
    case 'bool':
      if (typeof value !== 'boolean') throw new ColumnError(`${path} is ${describe(value)}, expected a boolean`);
      return value;
    case 'int64':
      if (typeof value === 'bigint') return value;
      if (typeof value !== 'number' || !Number.isSafeInteger(value))
        throw new ColumnError(`${path} is ${String(value)}, expected an integer`);
      return BigInt(value);
    case 'list':
      if (!Array.isArray(value)) throw new ColumnError(`${path} is ${describe(value)}, expected a list`);
      return value.map((v, i) => normalizeValue(col.element, v, `${path}[${i}]`));
    case 'struct': {
      if (typeof value !== 'object' || Array.isArray(value))
        throw new ColumnError(`${path} is ${describe(value)}, expected an object`);
      const obj = value as Record<string, unknown>;
      const known = new Set(col.fields.map((f) => f.name));
      const extra = Object.keys(obj).filter((k) => !known.has(k));
      if (extra.length) throw new ColumnError(`${path} has field(s) the table does not have: ${extra.join(', ')}`);
      return Object.fromEntries(col.fields.map((f) => [f.name, normalizeValue(f, obj[f.name], `${path}.${f.name}`)]));
    }
  }
}

/** Every row checked and normalised against the table's top-level columns (no other keys allowed). */
export function normalizeRows(
  columns: readonly Column[],
  rows: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  const root: Column = { name: 'row', kind: 'struct', fields: [...columns] };
  return rows.map((r, i) => normalizeValue(root, r, `row ${i}`) as Record<string, unknown>);
}

/** The column as one line of a schema listing: `prompt: list<struct<role: string, content: string>>`. */
export function columnType(col: Column): string {
  const base =
    col.kind === 'struct'
      ? `struct<${col.fields.map((f) => `${f.name}: ${columnType(f)}`).join(', ')}>`
      : col.kind === 'list'
        ? `list<${columnType(col.element)}>`
        : col.kind;
  return col.optional ? `${base}?` : base;
}
