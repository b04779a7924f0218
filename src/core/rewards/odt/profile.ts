// The local structural profile of one SELECT (App. D, "Local Structural Profile"). The AST it reads has already been
// canonicalised by build.ts: aliases resolved to table names, nested queries replaced by SUBQUERY_MARK.
import { SUBQUERY_PLACEHOLDER, type SelectAst } from '../../sql/parse';
import { exprSignature, functionName, predicateSignatures, uniqueSorted } from './signature';
import type { LocalProfile } from './types';

type Ast = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const AGGREGATES = new Set(['count', 'sum', 'avg', 'min', 'max', 'total', 'group_concat']);

export function extractProfile(ast: SelectAst): LocalProfile {
  const from = (Array.isArray(ast.from) ? ast.from : []) as Ast[];
  const columns = (Array.isArray(ast.columns) ? ast.columns : []) as Ast[];
  const groupby = ast.groupby as Ast[] | { columns?: Ast[] } | null | undefined;
  const groupItems: Ast[] = Array.isArray(groupby) ? groupby : (groupby?.columns ?? []);
  const orderItems = (Array.isArray(ast.orderby) ? ast.orderby : []) as Ast[];
  const limit = limitSignature(ast.limit as Ast | null | undefined);
  const distinct = String(ast.distinct ?? '').toUpperCase() === 'DISTINCT';
  return {
    counts: { joins: Math.max(0, from.length - 1), selectItems: columns.length },
    flags: {
      where: !!ast.where,
      groupBy: groupItems.length > 0,
      having: !!ast.having,
      orderBy: orderItems.length > 0,
      limit: limit !== null,
      aggregation: usesAggregation([columns, ast.having, orderItems]),
      distinct,
    },
    tables: uniqueSorted(
      from
        .filter((f) => typeof f.table === 'string' && !SUBQUERY_PLACEHOLDER.test(f.table))
        .map((f) => String(f.table).toLowerCase()),
    ),
    select: uniqueSorted(columns.map((c) => exprSignature(c.expr))),
    where: ast.where ? predicateSignatures(ast.where) : [],
    join: uniqueSorted(
      from.flatMap((f) => [
        ...(f.on ? predicateSignatures(f.on) : []),
        ...((f.using as unknown[] | null | undefined) ?? []).map(
          (u) => `USING ${String(typeof u === 'string' ? u : ((u as Ast)?.value ?? '')).toLowerCase()}`,
        ),
      ]),
    ),
    groupBy: uniqueSorted(groupItems.map(exprSignature)),
    having: ast.having ? predicateSignatures(ast.having) : [],
    orderBy: uniqueSorted([
      ...orderItems.map((o) => `${exprSignature(o.expr)} ${String(o.type ?? 'ASC').toUpperCase()}`),
      ...(limit ? [limit] : []),
    ]),
  };
}

/** LIMIT's structure with its values as placeholders; `LIMIT a, b` and `LIMIT b OFFSET a` are the same structure. */
function limitSignature(limit: Ast | null | undefined): string | null {
  const values = (limit?.value as unknown[] | undefined) ?? [];
  if (values.length === 0) return null;
  return values.length === 1 ? 'LIMIT ?' : 'LIMIT ? OFFSET ?';
}

/** Whether an aggregate function appears in these clauses (nested queries are marks by now, so they do not count). */
function usesAggregation(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(usesAggregation);
  const o = node as Ast;
  // a window aggregate (OVER …) does not collapse rows, so it is not aggregation usage
  if (o.type === 'aggr_func') return !o.over;
  // SQLite's max(a, b) and min(a, b) with two or more arguments are scalar functions, not aggregates.
  if (
    o.type === 'function' &&
    AGGREGATES.has(functionName(o)) &&
    ((o.args?.value as unknown[] | undefined)?.length ?? 0) === 1
  )
    return true;
  return Object.values(o).some(usesAggregation);
}
