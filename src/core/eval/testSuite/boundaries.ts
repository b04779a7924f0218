// The boundaries the gold queries (and their neighbours) draw: each `col OP literal` (BETWEEN's two ends, HAVING's
// `agg(col) OP literal` too), each comparison of two columns, and each `col OP (SELECT …)` with the scalar query's
// text, plus the columns the queries group by. Boundary variants (boundaryVariant.ts) put rows exactly on them, where
// `>` and `>=`, or 30 and 31, answer differently.
import type { Cell } from '../../db/types';
import { type QueryNode, type SelectAst, parseSql, selectToSql } from '../../sql/parse';
import { literalCell } from './neighbours';

export interface Boundaries {
  /** A lower-cased column and a value it is compared with. */
  literals: { column: string; value: Cell }[];
  /** Two lower-cased columns compared with each other. */
  columnPairs: [string, string][];
  /** A lower-cased column compared with a scalar query, and that query's text. */
  subqueries: { column: string; sql: string }[];
  /** Lower-cased columns of GROUP BY clauses, and the columns they are equated with (join keys). */
  groupColumns: string[];
}

type Node = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const COMPARISONS = new Set(['=', '!=', '<>', '<', '<=', '>', '>=', 'BETWEEN', 'NOT BETWEEN']);
const ORDERING = new Set(['<', '<=', '>', '>=', 'BETWEEN', 'NOT BETWEEN']);

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null;

/** The column a side compares: a column reference, or the column an aggregate reads. */
function comparedColumn(n: unknown): string | undefined {
  if (!isObject(n)) return undefined;
  const ref = n.type === 'aggr_func' ? n.args?.expr : n;
  if (!isObject(ref) || ref.type !== 'column_ref') return undefined;
  const name = typeof ref.column === 'string' ? ref.column : ref.column?.expr?.value;
  return typeof name === 'string' && name !== '*' ? name.toLowerCase() : undefined;
}

function selectsOf(node: QueryNode): SelectAst[] {
  return node.kind === 'select' ? [node.ast] : [...selectsOf(node.left), ...selectsOf(node.right)];
}

export function comparisonBoundaries(sqls: string[]): Boundaries {
  const out: Boundaries = { literals: [], columnPairs: [], subqueries: [], groupColumns: [] };
  const seen = new Set<string>();
  const equal: [string, string][] = [];
  const add = <T>(list: T[], key: string, item: T) => {
    if (seen.has(key)) return;
    seen.add(key);
    list.push(item);
  };
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if (!isObject(n)) return;
    if (isObject(n.groupby)) {
      for (const c of Array.isArray(n.groupby.columns) ? n.groupby.columns : []) {
        const name = comparedColumn(c);
        if (name) add(out.groupColumns, `g\u0000${name}`, name);
      }
    }
    const op = String(n.operator).toUpperCase();
    if (n.type === 'binary_expr' && COMPARISONS.has(op)) {
      for (const [c, other] of [
        [n.left, n.right],
        [n.right, n.left],
      ]) {
        const column = comparedColumn(c);
        if (!column || !isObject(other)) continue;
        const otherColumn = comparedColumn(other);
        if (otherColumn && other.type === 'column_ref' && otherColumn !== column) {
          const [a, b] = [column, otherColumn].sort();
          if (op === '=') equal.push([a, b]);
          add(out.columnPairs, `p\u0000${a}\u0000${b}`, [a, b]);
        }
        if (isObject(other.ast) && other.ast.type === 'select') {
          try {
            const sql = selectToSql(other.ast);
            add(out.subqueries, `s\u0000${column}\u0000${sql}`, { column, sql });
          } catch {
            // node-sql-parser cannot print it back: no boundary from it
          }
        }
        const items = other.type === 'expr_list' && Array.isArray(other.value) ? other.value : [other];
        for (const item of items) {
          const v = isObject(item) ? literalCell(item) : undefined;
          // A string's boundary matters to ordering comparisons; its equality is the fuzzer's business.
          if (v === undefined || (typeof v === 'string' && !ORDERING.has(op))) continue;
          add(out.literals, `l\u0000${column}\u0000${typeof v}\u0000${String(v)}`, { column, value: v });
        }
      }
    }
    for (const v of Object.values(n)) visit(v);
  };
  for (const sql of sqls) {
    const p = parseSql(sql);
    if (!p.ok) continue;
    visit(selectsOf(p.query));
    for (const sub of p.subqueries.values()) visit(selectsOf(sub));
  }
  // `GROUP BY T1.id … ON T1.id = T2.student_id`: the groups are those of student_id in T2's table too.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [a, b] of equal) {
      for (const [x, y] of [
        [a, b],
        [b, a],
      ]) {
        if (out.groupColumns.includes(x) && !out.groupColumns.includes(y)) {
          add(out.groupColumns, `g\u0000${y}`, y);
          grew = true;
        }
      }
    }
  }
  return out;
}
