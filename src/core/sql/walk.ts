// Walks a parsed query, calling back for every base table and column reference with aliases resolved.
// Shared by schema-item extraction and clause extraction so both resolve names the same way.
import type { QueryNode, SelectAst } from './parse';
import { SUBQUERY_PLACEHOLDER } from './parse';
import { Scope } from './scope';
import type { SchemaIndex } from './schemaLike';

interface ColumnHit {
  /** Base table (lower-cased) when known. */
  table: string | undefined;
  /** As written, when written qualified (alias or table name). */
  qualifier: string | undefined;
  column: string;
  /** The qualifier named a CTE or derived table, so the column is not a base-table column. */
  derived: boolean;
  /** An unqualified name that is an output alias of the SELECT list, not a column. */
  selectAlias: boolean;
  /** Came from a "double-quoted" token that may be a string literal (SQLite's legacy rule). */
  doubleQuoted: boolean;
  /** The AST node, so callers may rewrite it (clause extraction replaces aliases by table names). */
  node: Record<string, unknown>;
}

interface WalkVisitor {
  table?(name: string): void;
  column?(hit: ColumnHit): void;
}

interface WalkContext {
  schema: SchemaIndex | undefined;
  subqueries: Map<string, QueryNode>;
}

export function walkQuery(
  node: QueryNode,
  parent: Scope | undefined,
  ctes: ReadonlySet<string>,
  ctx: WalkContext,
  v: WalkVisitor,
): void {
  if (node.kind === 'set') {
    walkQuery(node.left, parent, ctes, ctx, v);
    walkQuery(node.right, parent, ctes, ctx, v);
    return;
  }
  walkSelect(node.ast, parent, ctes, ctx, v);
}

/** Builds the scope of one SELECT (walking its CTEs and FROM subqueries) and returns it. */
function walkSelect(
  ast: SelectAst,
  parent: Scope | undefined,
  inheritedCtes: ReadonlySet<string>,
  ctx: WalkContext,
  v: WalkVisitor,
): Scope {
  const ctes = new Set(inheritedCtes);
  for (const w of (ast.with as SelectAst[] | null) ?? []) {
    const name = String(w.name?.value ?? w.name ?? '').toLowerCase();
    ctes.add(name); // added first: a recursive CTE names itself
    const stmt = w.stmt?.ast ?? w.stmt;
    if (stmt && typeof stmt === 'object') walkAnyQuery(stmt as SelectAst, parent, ctes, ctx, v);
  }
  const scope = new Scope(parent, ctes);
  for (const c of (ast.columns as SelectAst[] | null) ?? []) {
    const as = typeof c?.as === 'string' ? c.as : c?.as?.value;
    if (typeof as === 'string') scope.selectAliases.add(as.toLowerCase());
  }
  const from = Array.isArray(ast.from) ? (ast.from as SelectAst[]) : [];
  for (const f of from) {
    const alias = typeof f.as === 'string' ? f.as : f.as?.value;
    if (typeof f.table === 'string') {
      const name = f.table.toLowerCase();
      if (SUBQUERY_PLACEHOLDER.test(f.table)) {
        const sub = ctx.subqueries.get(f.table);
        if (sub) walkQuery(sub, parent, ctes, ctx, v);
        scope.sources.set((alias ?? name).toLowerCase(), { kind: 'derived' });
      } else if (ctes.has(name) && !f.db) {
        scope.sources.set((alias ?? name).toLowerCase(), { kind: 'derived' });
      } else {
        v.table?.(name);
        scope.sources.set((alias ?? name).toLowerCase(), { kind: 'table', table: name });
        if (alias) scope.sources.set(name, { kind: 'table', table: name });
      }
    } else if (f.expr?.ast) {
      walkAnyQuery(f.expr.ast as SelectAst, parent, ctes, ctx, v);
      if (alias) scope.sources.set(alias.toLowerCase(), { kind: 'derived' });
      else scope.sources.set(`(derived ${scope.sources.size})`, { kind: 'derived' });
    }
  }
  for (const f of from) {
    if (f.on) walkExpr(f.on, scope, ctx, v);
    for (const u of (f.using as unknown[] | null) ?? []) {
      const column = typeof u === 'string' ? u : String((u as { value?: unknown })?.value ?? '');
      if (column) reportUnqualified(column, false, { type: 'column_ref', table: null, column }, scope, ctx, v);
    }
  }
  for (const [key, value] of Object.entries(ast)) {
    if (key === 'from' || key === 'with' || key === '_next' || key === 'tableList' || key === 'columnList') continue;
    walkExpr(value, scope, ctx, v);
  }
  return scope;
}

function walkAnyQuery(
  ast: SelectAst,
  parent: Scope | undefined,
  ctes: ReadonlySet<string>,
  ctx: WalkContext,
  v: WalkVisitor,
): void {
  let cur: SelectAst | undefined = ast;
  while (cur) {
    walkSelect(cur, parent, ctes, ctx, v);
    cur = cur._next as SelectAst | undefined;
  }
}

function columnName(ref: Record<string, any>): string {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  const c = ref.column;
  if (typeof c === 'string') return c;
  return String(c?.expr?.value ?? c?.value ?? '');
}

function walkExpr(node: unknown, scope: Scope, ctx: WalkContext, v: WalkVisitor): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const x of node) walkExpr(x, scope, ctx, v);
    return;
  }
  const o = node as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  if (o.ast && typeof o.ast === 'object' && (o.ast.type === 'select' || o.ast.columns)) {
    walkAnyQuery(o.ast as SelectAst, scope, scope.ctes, ctx, v);
    return;
  }
  if (o.type === 'select' && Array.isArray(o.columns)) {
    walkAnyQuery(o as SelectAst, scope, scope.ctes, ctx, v);
    return;
  }
  if (o.type === 'column_ref') {
    const column = columnName(o);
    if (column === '*' || column === '') return;
    if (o.table) {
      const src = scope.resolveQualifier(String(o.table));
      v.column?.({
        table: src?.kind === 'table' ? src.table : undefined,
        qualifier: String(o.table),
        column,
        derived: src?.kind === 'derived',
        selectAlias: false,
        doubleQuoted: false,
        node: o,
      });
    } else {
      // The grammar sometimes returns a "double-quoted" literal with odd characters (a tab…) as a column_ref, its
      // quotes lost; a non-plain bare name is therefore treated like a double-quoted token: a column only if it
      // resolves.
      reportUnqualified(column, !/^[A-Za-z_][A-Za-z0-9_$]*$/.test(column), o, scope, ctx, v);
    }
    return;
  }
  if (o.type === 'double_quote_string' && typeof o.value === 'string') {
    reportUnqualified(o.value, true, o, scope, ctx, v);
    return;
  }
  for (const value of Object.values(o)) walkExpr(value, scope, ctx, v);
}

function reportUnqualified(
  column: string,
  doubleQuoted: boolean,
  node: Record<string, unknown>,
  scope: Scope,
  ctx: WalkContext,
  v: WalkVisitor,
): void {
  const table = scope.resolveColumn(column, ctx.schema);
  let selectAlias = false;
  for (let s: Scope | undefined = scope; s; s = s.parent)
    if (s.selectAliases.has(column.toLowerCase())) selectAlias = true;
  v.column?.({
    table,
    qualifier: undefined,
    column,
    derived: !table && scope.hasDerivedSources(),
    selectAlias: !table && selectAlias,
    doubleQuoted,
    node,
  });
}
