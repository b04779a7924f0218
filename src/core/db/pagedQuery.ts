// SQL text for one page of a query's whole result: the user's (or a preview's) statement wrapped as a common table
// expression with numbered columns, then filtered, sorted and cut with LIMIT/OFFSET by SQLite. The wrapped text is
// still run through the sandbox pool, which judges it like any other statement (read-only, one statement, budgets).
import { leadingKeyword } from './guard';

/** One column's filter as typed in the grid's filter box. */
export interface ColumnFilter {
  column: number;
  text: string;
}

interface PageOrder {
  column: number;
  descending: boolean;
}

/** Which rows of the whole (filtered, sorted) result one page shows. */
export interface PageSpec {
  offset: number;
  limit: number;
  order: PageOrder | null;
  filters: ColumnFilter[];
}

/** The column names the wrapper gives the statement's columns: c0, c1, … (a query may repeat a name). */
const wrappedColumn = (i: number): string => `c${i}`;

/**
 * The statement ready to be wrapped (trailing semicolons and spaces dropped), or null when it cannot be: only a
 * SELECT, WITH or VALUES statement produces a result SQLite can take as a subquery (PRAGMA and EXPLAIN cannot).
 */
export function pageableSql(sql: string): string | null {
  const keyword = leadingKeyword(sql);
  if (keyword !== 'SELECT' && keyword !== 'WITH' && keyword !== 'VALUES') return null;
  return sql.replace(/[\s;]+$/u, '');
}

/** A string as an SQL literal. */
function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The condition one filter box stands for, on the wrapped column `col`:
 * - `is null` / `not null` (any case): the cell is (not) NULL;
 * - `=x`, `!=x`, `<x`, `<=x`, `>x`, `>=x`: a comparison (x a number when it reads as one, else text);
 * - anything else: the cell's text contains it (SQLite's LIKE: case-insensitive for ASCII letters).
 * Null when the box is empty (no condition).
 */
export function filterCondition(col: string, raw: string): string | null {
  const text = raw.trim();
  if (text === '') return null;
  if (/^is\s+null$/i.test(text)) return `${col} IS NULL`;
  if (/^(is\s+)?not\s+null$/i.test(text)) return `${col} IS NOT NULL`;
  const op = /^(<=|>=|!=|<>|=|<|>)\s*(.*)$/s.exec(text);
  if (op && op[2] !== '') {
    const value = op[2].trim();
    const literal = NUMBER.test(value) ? value : sqlString(value);
    return `${col} ${op[1] === '<>' ? '!=' : op[1]} ${literal}`;
  }
  const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
  return `CAST(${col} AS TEXT) LIKE ${sqlString(`%${escaped}%`)} ESCAPE '\\'`;
}

function withClause(base: string, columnCount: number): string {
  const names = Array.from({ length: columnCount }, (_, i) => wrappedColumn(i)).join(', ');
  // The newline ends a trailing `-- comment` in the user's text before the closing parenthesis.
  return `WITH quarry_result(${names}) AS (\n${base}\n)`;
}

function whereClause(filters: readonly ColumnFilter[], columnCount: number): string {
  const conditions = filters
    .filter((f) => Number.isInteger(f.column) && f.column >= 0 && f.column < columnCount)
    .map((f) => filterCondition(wrappedColumn(f.column), f.text))
    .filter((c): c is string => c !== null);
  return conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
}

/**
 * One page of `base` (a pageableSql result with `columnCount` columns). A sort puts the other columns after the chosen
 * one as tie-breakers, so pages never repeat or skip rows when many rows share a value.
 */
export function pageSql(base: string, columnCount: number, spec: PageSpec): string {
  let order = '';
  if (spec.order && spec.order.column >= 0 && spec.order.column < columnCount) {
    const first = `${wrappedColumn(spec.order.column)} ${spec.order.descending ? 'DESC' : 'ASC'}`;
    const rest = Array.from({ length: columnCount }, (_, i) => i)
      .filter((i) => i !== spec.order!.column)
      .map(wrappedColumn);
    order = ` ORDER BY ${[first, ...rest].join(', ')}`;
  }
  const limit = Math.max(0, Math.floor(spec.limit));
  const offset = Math.max(0, Math.floor(spec.offset));
  return (
    `${withClause(base, columnCount)} SELECT * FROM quarry_result` +
    `${whereClause(spec.filters, columnCount)}${order} LIMIT ${limit} OFFSET ${offset}`
  );
}

/** How many rows `base` has after the filters, counted by SQLite. */
export function countSql(base: string, columnCount: number, filters: readonly ColumnFilter[]): string {
  return `${withClause(base, columnCount)} SELECT count(*) FROM quarry_result${whereClause(filters, columnCount)}`;
}
