// Clause-level view of a query: structured per SELECT, and as flat sets of normalised strings per clause — the
// c(y) of MTSQL-R1's clause-match reward (F1 over SELECT, WHERE, JOIN, GROUP, ORDER).
//
// Strings are made comparable across spellings: table aliases are replaced by table names (T1.name → singer.name),
// unqualified columns are qualified when a schema is given, "double-quoted" literals that name no column become
// 'single-quoted', select-item aliases are dropped, plain quoted names are unquoted, and every string goes through
// normalizeSql. ON equalities have their sides sorted (a.x = b.y and b.y = a.x are one join condition).
import { parseSql, astToSql, selectToSql, type QueryNode, type SelectAst, type SetOp } from './parse';
import { walkQuery } from './walk';
import { indexSchema, type SchemaLike } from './schemaLike';
import { normalizedTokens } from './normalize';
import { tokenize, unquoteIdent } from './tokens';
import { isKeyword } from './keywords';

interface FromItem {
  /** Base table or CTE name (lower-cased); null for a derived table. */
  table: string | null;
  alias: string | null;
  /** The derived table's own clauses. */
  subquery: QueryClauses | null;
  /** 'INNER JOIN', 'LEFT JOIN'…; null for the first item (and for comma joins the grammar reports as such). */
  join: string | null;
  on: string | null;
  using: string[];
}

interface SelectClauses {
  kind: 'select';
  distinct: boolean;
  select: string[];
  from: FromItem[];
  where: string | null;
  /** WHERE split at its top-level ANDs. */
  whereConditions: string[];
  groupBy: string[];
  having: string | null;
  orderBy: string[];
  limit: string | null;
  /** Subqueries in expressions (IN, EXISTS, scalar…) of this SELECT, as normalised text. */
  subqueries: string[];
}

type QueryClauses = SelectClauses | { kind: 'set'; op: SetOp; left: QueryClauses; right: QueryClauses };

/** Per clause, the normalised strings of all SELECT arms of the top-level query (subqueries stay inside strings). */
export interface ClauseSets {
  select: string[];
  where: string[];
  join: string[];
  group: string[];
  order: string[];
  having: string[];
  limit: string[];
  setOps: string[];
}

export type ClauseResult =
  | { ok: true; query: QueryClauses; sets: ClauseSets; rewrites: string[] }
  | { ok: false; error: string };

export function extractClauses(sql: string, schema?: SchemaLike): ClauseResult {
  const parsed = parseSql(sql);
  if (!parsed.ok) return parsed;
  try {
    const query = structuredClone(parsed.query);
    const subqueries = structuredClone(parsed.subqueries);
    const canonicalise = (node: QueryNode) =>
      walkQuery(
        node,
        undefined,
        new Set(),
        { schema: indexSchema(schema), subqueries },
        {
          column: (hit) => {
            const n = hit.node as Record<string, unknown>;
            if (hit.doubleQuoted) {
              if (hit.table) Object.assign(n, { type: 'column_ref', table: hit.table, column: hit.column });
              else n.type = 'single_quote_string';
            } else if (hit.table) {
              n.table = hit.table;
            }
          },
        },
      );
    canonicalise(query);
    const subText = new Map<string, string>();
    for (const [name, node] of subqueries) subText.set(name, queryText(node));
    const norm = (text: string) => clauseText(text, subText);
    const clauses = toClauses(query, norm);
    return { ok: true, query: clauses, sets: flatten(clauses), rewrites: parsed.rewrites };
  } catch (err) {
    return { ok: false, error: (err as Error)?.message ?? String(err) };
  }
}

function queryText(node: QueryNode): string {
  return node.kind === 'select'
    ? selectToSql(node.ast)
    : `${queryText(node.left)} ${node.op.toUpperCase()} ${queryText(node.right)}`;
}

/** Normalised clause text: plain quoted names unquoted and lower-cased, placeholders replaced by their queries. */
function clauseText(sql: string, subText: Map<string, string>): string {
  let text = sql;
  for (const [name, sub] of subText) text = text.split(`SELECT * FROM "${name}"`).join(sub);
  const rebuilt = tokenize(text)
    .map((t) => {
      if (t.kind === 'quoted') {
        const name = unquoteIdent(t.text);
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !isKeyword(name)) return name;
      }
      return t.text;
    })
    .join(' ');
  return normalizedTokens(rebuilt).join(' ').replace(/\( /g, '(').replace(/ \)/g, ')').replace(/ ,/g, ',');
}

function toClauses(node: QueryNode, norm: (s: string) => string): QueryClauses {
  if (node.kind === 'set')
    return { kind: 'set', op: node.op, left: toClauses(node.left, norm), right: toClauses(node.right, norm) };
  return selectClauses(node.ast, norm);
}

function selectClauses(ast: SelectAst, norm: (s: string) => string): SelectClauses {
  const expr = (e: unknown) => norm(astToSql(e));
  const columns = (ast.columns as SelectAst[] | string | null) ?? [];
  const select = Array.isArray(columns) ? columns.map((c) => expr(c.expr)) : [String(columns)];
  const from: FromItem[] = ((ast.from as SelectAst[] | null) ?? []).map((f) => ({
    table: typeof f.table === 'string' ? f.table.toLowerCase() : null,
    alias: typeof f.as === 'string' ? f.as : null,
    subquery: f.expr?.ast ? toClauses(nodeOf(f.expr.ast), norm) : null,
    join: typeof f.join === 'string' ? f.join.toUpperCase() : null,
    on: f.on ? expr(f.on) : null,
    using: ((f.using as unknown[] | null) ?? []).map((u) =>
      String(typeof u === 'string' ? u : (u as { value?: unknown }).value).toLowerCase(),
    ),
  }));
  const groupby = ast.groupby;
  const groupItems: unknown[] = Array.isArray(groupby) ? groupby : (groupby?.columns ?? []);
  const subqueries: unknown[] = [];
  collectSubqueries(
    [ast.columns, ast.where, ast.having, ast.orderby, ...((ast.from as SelectAst[] | null) ?? []).map((f) => f.on)],
    subqueries,
  );
  return {
    kind: 'select',
    distinct: String(ast.distinct ?? '').toUpperCase() === 'DISTINCT',
    select,
    from,
    where: ast.where ? expr(ast.where) : null,
    whereConditions: ast.where ? conjuncts(ast.where).map(expr) : [],
    groupBy: groupItems.map(expr),
    having: ast.having ? expr(ast.having) : null,
    orderBy: ((ast.orderby as SelectAst[] | null) ?? []).map(
      (o) => `${expr(o.expr)} ${String(o.type ?? 'ASC').toUpperCase()}`,
    ),
    limit: limitText(ast.limit, expr),
    subqueries: subqueries.map((s) => norm(selectToSql(s as unknown as SelectAst))),
  };
}

function nodeOf(ast: SelectAst): QueryNode {
  if (!ast._next) return { kind: 'select', ast };
  const { _next: next, set_op: op, ...head } = ast;
  return {
    kind: 'set',
    op: String(op ?? 'union').toLowerCase() as SetOp,
    left: { kind: 'select', ast: head },
    right: nodeOf(next as SelectAst),
  };
}

function collectSubqueries(node: unknown, out: unknown[]): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) collectSubqueries(x, out);
    return;
  }
  const o = node as Record<string, unknown>;
  if (o.ast && typeof o.ast === 'object') {
    out.push(o.ast);
    return;
  }
  for (const v of Object.values(o)) collectSubqueries(v, out);
}

/** Top-level AND operands (a parenthesised AND group stays one condition). */
function conjuncts(e: SelectAst): SelectAst[] {
  if (e?.type === 'binary_expr' && String(e.operator).toUpperCase() === 'AND' && !e.parentheses) {
    return [...conjuncts(e.left as SelectAst), ...conjuncts(e.right as SelectAst)];
  }
  return [e];
}

function limitText(limit: SelectAst | null | undefined, expr: (e: unknown) => string): string | null {
  const values = (limit?.value as unknown[] | undefined) ?? [];
  if (values.length === 0) return null;
  if (values.length === 1) return `LIMIT ${expr(values[0])}`;
  // `LIMIT a, b` means offset a, count b; `LIMIT a OFFSET b` means count a, offset b. Both become LIMIT n OFFSET m.
  const [count, offset] = limit?.seperator === ',' ? [values[1], values[0]] : [values[0], values[1]];
  return `LIMIT ${expr(count)} OFFSET ${expr(offset)}`;
}

function selectArms(q: QueryClauses): SelectClauses[] {
  return q.kind === 'select' ? [q] : [...selectArms(q.left), ...selectArms(q.right)];
}

function setOps(q: QueryClauses): string[] {
  return q.kind === 'select' ? [] : [...setOps(q.left), q.op.toUpperCase(), ...setOps(q.right)];
}

function flatten(q: QueryClauses): ClauseSets {
  const arms = selectArms(q);
  const join: string[] = [];
  for (const a of arms) {
    if (a.from.length < 2) continue;
    for (const f of a.from) join.push(f.table ?? '(subquery)');
    for (const f of a.from) if (f.on) join.push(...f.on.split(/ AND /).map(sortEquality));
  }
  return {
    select: arms.flatMap((a) => a.select.map((s) => (a.distinct ? `DISTINCT ${s}` : s))),
    where: arms.flatMap((a) => a.whereConditions),
    join,
    group: arms.flatMap((a) => a.groupBy),
    order: arms.flatMap((a) => a.orderBy),
    having: arms.flatMap((a) => (a.having ? [a.having] : [])),
    limit: arms.flatMap((a) => (a.limit ? [a.limit] : [])),
    setOps: setOps(q),
  };
}

function sortEquality(cond: string): string {
  const m = /^(\S+) = (\S+)$/.exec(cond);
  return m ? [m[1], m[2]].sort().join(' = ') : cond;
}
