// SQL → ODT (App. D, "ODT Construction"). Parsing is the project's never-throwing parseSql (node-sql-parser's SQLite
// grammar); name resolution is the shared walker (src/core/sql/walk.ts), the same one schema items and clauses use.
//
// Tree shape:
//   ROOT      children: the statement's CTEs (one CTE node each, in WITH order), then its body
//   CTE       label: name; children: the CTE's own CTEs, then its body
//   SET_OP    label: operator; children: the arms. A chain of the same operator is one node (A ∪ B ∪ C has three
//             children), so left- and right-nested spellings of one chain give the same tree.
//   SELECT    profile; children: one SUBQUERY per nested query in FROM, ON, SELECT, WHERE, GROUP BY, HAVING, ORDER BY
//   SUBQUERY  label: the clause; children: the nested query's CTEs, then its body
//
// Normalisation choices App. D leaves open (docs/rewards.md, "ODT", lists them all):
//   - Table aliases are resolved to table names before signatures are made (t1.price and cl.price over the same
//     table are one column). App. D lower-cases names and ignores aggregation aliases but says nothing of table
//     aliases; since ODT exists to be insensitive to surface variation, an alias name is treated as surface.
//   - Unqualified columns are qualified with their table: through the schema when one is given, else when the SELECT
//     reads exactly one table (or CTE). Elsewhere an unqualified column stays bare.
//   - A reference to an output alias (ORDER BY cnt) is replaced by the aliased expression, so item aliases never
//     matter anywhere ("AVG(price) AS avg_price and AVG(price) AS average_price are treated as equivalent").
import { parseSql, fromAst, SUBQUERY_PLACEHOLDER, type QueryNode, type SelectAst } from '../../sql/parse';
import { walkQuery } from '../../sql/walk';
import { indexSchema, type SchemaLike } from '../../sql/schemaLike';
import { SUBQUERY_MARK } from './signature';
import { extractProfile } from './profile';
import type { OdtBuild, OdtNode } from './types';

type Ast = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface BuildOptions {
  /** Resolves unqualified columns in multi-table SELECTs (SchemaInfo from src/core/db/schema fits). */
  schema?: SchemaLike;
}

/** Marks an unqualified column_ref that names an output alias of its SELECT. */
const ALIAS_FLAG = '__odtAlias';

/** Parses and abstracts one query. Never throws: a parse failure (or anything unexpected) is `{ ok: false }`. */
export function buildOdt(sql: string, options: BuildOptions = {}): OdtBuild {
  const parsed = parseSql(sql);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  try {
    // parseSql returns fresh ASTs, so they are ours to rewrite in place.
    walkQuery(
      parsed.query,
      undefined,
      new Set(),
      { schema: indexSchema(options.schema), subqueries: parsed.subqueries },
      {
        column: (hit) => {
          const n = hit.node as Ast;
          if (hit.doubleQuoted) {
            // SQLite reads a "double-quoted" token that names no column as a string literal.
            if (hit.table) Object.assign(n, { type: 'column_ref', table: hit.table, column: hit.column });
            else n.type = 'single_quote_string';
          } else if (hit.table) {
            n.table = hit.table;
          } else if (hit.selectAlias) {
            n[ALIAS_FLAG] = true;
          }
        },
      },
    );
    const root: OdtNode = {
      type: 'ROOT',
      label: null,
      profile: null,
      children: new Builder(parsed.subqueries).queryChildren(parsed.query),
    };
    return { ok: true, root, rewrites: parsed.rewrites };
  } catch (err) {
    return { ok: false, error: `ODT construction failed: ${(err as Error)?.message ?? String(err)}` };
  }
}

class Builder {
  constructor(private readonly placeholders: Map<string, QueryNode>) {}

  /** A query's CTE nodes followed by its body node. */
  queryChildren(q: QueryNode): OdtNode[] {
    const head = leftmost(q);
    const ctes = ((head.with as Ast[] | null | undefined) ?? []).map((w) => this.cte(w));
    return [...ctes, this.body(q)];
  }

  private cte(w: Ast): OdtNode {
    const name = String(w.name?.value ?? w.name ?? '').toLowerCase();
    const stmt = (w.stmt?.ast ?? w.stmt) as SelectAst;
    return { type: 'CTE', label: name, profile: null, children: this.queryChildren(this.resolve(stmt)) };
  }

  private body(q: QueryNode): OdtNode {
    if (q.kind === 'select') return this.select(q.ast);
    const arms: QueryNode[] = [];
    const collect = (n: QueryNode) => {
      if (n.kind === 'set' && n.op === q.op) {
        collect(n.left);
        collect(n.right);
      } else arms.push(n);
    };
    collect(q);
    return { type: 'SET_OP', label: q.op, profile: null, children: arms.map((a) => this.body(a)) };
  }

  private select(ast: SelectAst): OdtNode {
    const children: OdtNode[] = [];
    const from = (Array.isArray(ast.from) ? ast.from : []) as Ast[];
    for (const f of from) {
      if (typeof f.table === 'string' && SUBQUERY_PLACEHOLDER.test(f.table)) {
        const q = this.placeholders.get(f.table);
        if (q) children.push(this.subquery(q, 'from'));
      } else if (f.expr?.ast) {
        children.push(this.subquery(this.resolve(f.expr.ast as SelectAst), 'from'));
      }
    }
    for (const f of from) if (f.on) this.cutSubqueries(f.on, 'on', children);
    this.cutSubqueries(ast.columns, 'select', children);
    this.cutSubqueries(ast.where, 'where', children);
    this.cutSubqueries(ast.groupby, 'group by', children);
    this.cutSubqueries(ast.having, 'having', children);
    this.cutSubqueries(ast.orderby, 'order by', children);
    qualifyAndExpandAliases(ast);
    return { type: 'SELECT', label: null, profile: extractProfile(ast), children };
  }

  private subquery(q: QueryNode, clause: string): OdtNode {
    return { type: 'SUBQUERY', label: clause, profile: null, children: this.queryChildren(q) };
  }

  /** Replaces each nested query in an expression by SUBQUERY_MARK, adding it as a child (outermost only). */
  private cutSubqueries(node: unknown, clause: string, out: OdtNode[]): void {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const x of node) this.cutSubqueries(x, clause, out);
      return;
    }
    const o = node as Ast;
    const sub =
      o.ast && typeof o.ast === 'object'
        ? (o.ast as SelectAst)
        : o.type === 'select' && Array.isArray(o.columns)
          ? (o as SelectAst)
          : null;
    if (sub) {
      out.push(this.subquery(this.resolve(sub), clause));
      for (const k of Object.keys(o)) delete o[k];
      Object.assign(o, { type: 'column_ref', table: null, column: SUBQUERY_MARK });
      return;
    }
    for (const v of Object.values(o)) this.cutSubqueries(v, clause, out);
  }

  /** A nested SELECT AST as a query; `SELECT * FROM __quarry_sub_N` (parse rewrite R2) is the query it stands for. */
  private resolve(ast: SelectAst): QueryNode {
    const from = ast.from as Ast[] | null | undefined;
    const cols = ast.columns as Ast[] | string | null | undefined;
    if (
      !ast._next &&
      Array.isArray(from) &&
      from.length === 1 &&
      typeof from[0].table === 'string' &&
      SUBQUERY_PLACEHOLDER.test(from[0].table) &&
      !ast.where &&
      isStar(cols)
    ) {
      const q = this.placeholders.get(from[0].table);
      if (q) return q;
    }
    return fromAst(ast);
  }
}

function isStar(cols: Ast[] | string | null | undefined): boolean {
  if (cols === '*') return true;
  return (
    Array.isArray(cols) &&
    cols.length === 1 &&
    cols[0]?.expr?.type === 'column_ref' &&
    cols[0].expr.column === '*' &&
    !cols[0].expr.table
  );
}

function leftmost(q: QueryNode): SelectAst {
  return q.kind === 'select' ? q.ast : leftmost(q.left);
}

/**
 * Within one SELECT (nested queries are marks by now): output-alias references become the aliased expression (first,
 * so a name that is both is read as the alias, as SQLite reads ORDER BY), then bare columns get the SELECT's only
 * table when it reads exactly one.
 */
function qualifyAndExpandAliases(ast: SelectAst): void {
  const from = (Array.isArray(ast.from) ? ast.from : []) as Ast[];
  const only =
    from.length === 1 && typeof from[0].table === 'string' && !SUBQUERY_PLACEHOLDER.test(from[0].table)
      ? String(from[0].table).toLowerCase()
      : null;
  const qualify = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach(qualify);
      return;
    }
    const o = node as Ast;
    if (o.type === 'column_ref') {
      if (only && !o.table && o.column !== '*' && o.column !== SUBQUERY_MARK) o.table = only;
      return;
    }
    Object.values(o).forEach(qualify);
  };
  const columns = (Array.isArray(ast.columns) ? ast.columns : []) as Ast[];
  qualify(columns);
  const aliases = new Map<string, Ast>();
  for (const c of columns) {
    const as = typeof c?.as === 'string' ? c.as : c?.as?.value;
    if (typeof as === 'string' && c.expr) aliases.set(as.toLowerCase(), c.expr as Ast);
  }
  const expand = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach(expand);
      return;
    }
    const o = node as Ast;
    if (o.type === 'column_ref' && o[ALIAS_FLAG]) {
      const target = aliases.get(String(o.column).toLowerCase());
      if (target) {
        for (const k of Object.keys(o)) delete o[k];
        Object.assign(o, structuredClone(target));
      }
      return;
    }
    Object.values(o).forEach(expand);
  };
  for (const clause of [ast.where, ast.groupby, ast.having, ast.orderby, ...from.map((f) => f.on)]) {
    expand(clause);
    qualify(clause);
  }
}
