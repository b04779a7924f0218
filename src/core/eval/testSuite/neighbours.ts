// Near neighbours of a gold query: the same query with one small change of meaning — a comparison operator, a
// literal (another value of the compared column, preferring one as frequent as the gold's, so both select as many
// rows), an aggregate, a join key, DISTINCT, LIMIT, an ORDER BY direction, AND/OR, or a selected column. A test
// suite is good when its databases tell each gold query apart from its neighbours (Zhong, Yu and Klein, EMNLP 2020).
// Queries are changed on node-sql-parser's AST (src/core/sql/parse.ts) and printed back; queries whose nested
// INTERSECT/EXCEPT parse had to cut out (rewrite R2) are left alone.
import type { Cell } from '../../db/types';
import { type QueryNode, type SelectAst, parseSql, selectToSql } from '../../sql/parse';
import type { Rng } from '../../util/random';
import type { SourceProfile } from './sourceProfile';

/** One site of change: the alternatives it offers, each applied in place to the AST the site was found in. */
interface Site {
  kind: string;
  alternatives: ((() => void) | undefined)[];
}

export type NeighbourKind =
  | 'comparison'
  | 'literal'
  | 'aggregate'
  | 'join-key'
  | 'distinct'
  | 'limit'
  | 'order'
  | 'logic'
  | 'column';

const COMPARISON_SWAPS: Record<string, string[]> = {
  '=': ['!=', '<', '>'],
  '!=': ['='],
  '<>': ['='],
  '<': ['<=', '>'],
  '<=': ['<', '>='],
  '>': ['>=', '<'],
  '>=': ['>', '<='],
  LIKE: ['NOT LIKE'],
  'NOT LIKE': ['LIKE'],
  IN: ['NOT IN'],
  'NOT IN': ['IN'],
};
const AGGREGATE_SWAPS: Record<string, string[]> = { MAX: ['MIN'], MIN: ['MAX'], AVG: ['SUM', 'MAX'], SUM: ['AVG'] };

type Node = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const isObject = (v: unknown): v is Node => typeof v === 'object' && v !== null;
const columnName = (ref: Node): string | undefined =>
  typeof ref.column === 'string' ? ref.column : (ref.column?.expr?.value as string | undefined);

/** The schema a query's names are resolved against. */
interface NeighbourSchema {
  /** Lower-cased table name → its columns (original spelling) with each column's values and counts. */
  tables: Map<string, { name: string; values: { value: Cell; count: number }[] }[]>;
}

export function neighbourSchema(profile: SourceProfile): NeighbourSchema {
  return {
    tables: new Map(
      profile.tables.map((t) => [
        t.name.toLowerCase(),
        t.columns.map((c, i) => ({ name: c.name, values: t.values[i] })),
      ]),
    ),
  };
}

/** Aliases and table names of every FROM list in the query → lower-cased table name. */
function aliasMap(ast: Node, out = new Map<string, string>()): Map<string, string> {
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) n.forEach(visit);
    else if (isObject(n)) {
      if (Array.isArray(n.from)) {
        for (const f of n.from) {
          if (typeof f?.table !== 'string') continue;
          out.set(f.table.toLowerCase(), f.table.toLowerCase());
          if (typeof f.as === 'string') out.set(f.as.toLowerCase(), f.table.toLowerCase());
        }
      }
      for (const v of Object.values(n)) visit(v);
    }
  };
  visit(ast);
  return out;
}

/** A literal's value as a cell (numbers as bigint when whole and safe); undefined for anything else. */
export function literalCell(n: Node): Cell | undefined {
  if (n.type === 'number' && n.value !== '' && Number.isFinite(Number(n.value))) {
    const v = Number(n.value);
    return Number.isSafeInteger(v) ? BigInt(v) : v;
  }
  if (/^(single_quote_string|double_quote_string|string)$/.test(String(n.type)) && typeof n.value === 'string')
    return n.value;
  return undefined;
}

/** The table a column reference belongs to: its qualifier's, else the only FROM table having that column. */
function tableOf(ref: Node, aliases: Map<string, string>, schema: NeighbourSchema): string | undefined {
  const col = columnName(ref)?.toLowerCase();
  if (!col) return undefined;
  if (typeof ref.table === 'string') return aliases.get(ref.table.toLowerCase()) ?? ref.table.toLowerCase();
  const having = [...new Set(aliases.values())].filter((t) =>
    schema.tables.get(t)?.some((c) => c.name.toLowerCase() === col),
  );
  return having.length === 1 ? having[0] : undefined;
}

function columnValues(ref: Node, aliases: Map<string, string>, schema: NeighbourSchema) {
  const table = tableOf(ref, aliases, schema);
  const col = columnName(ref)?.toLowerCase();
  return table ? schema.tables.get(table)?.find((c) => c.name.toLowerCase() === col) : undefined;
}

/** Other values of the column for a literal: up to two as frequent as it (same row counts), then one other. */
function literalAlternatives(lit: Node, values: { value: Cell; count: number }[] | undefined): Cell[] {
  const own = literalCell(lit);
  if (own === undefined) return [];
  if (typeof own !== 'string') {
    const n = Number(own);
    return Number.isInteger(n) ? [BigInt(n + 1), BigInt(n - 1)] : [n + 1, n - 1];
  }
  const others = (values ?? []).filter((v) => typeof v.value === 'string' && v.value !== own);
  const ownCount = values?.find((v) => v.value === own)?.count;
  const same = others.filter((v) => v.count === ownCount).slice(0, 2);
  const rest = others.filter((v) => !same.includes(v)).slice(0, 1);
  const out = [...same, ...rest].map((v) => v.value);
  return out.length > 0 ? out : [`${own}x`];
}

function setLiteral(lit: Node, v: Cell): void {
  if (typeof v === 'string') {
    lit.type = 'single_quote_string';
    lit.value = v;
  } else {
    lit.type = 'number';
    lit.value = Number(v);
  }
}

/** Every site of change in `ast`, in a fixed order (the same for any structurally equal AST). */
function collectSites(ast: Node, schema: NeighbourSchema): Site[] {
  const aliases = aliasMap(ast);
  const sites: Site[] = [];
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if (!isObject(n)) return;
    if (n.type === 'binary_expr') {
      const op = String(n.operator).toUpperCase();
      const swaps = COMPARISON_SWAPS[op];
      if (swaps) sites.push({ kind: 'comparison', alternatives: swaps.map((s) => () => void (n.operator = s)) });
      if (op === 'AND' || op === 'OR')
        sites.push({ kind: 'logic', alternatives: [() => void (n.operator = op === 'AND' ? 'OR' : 'AND')] });
      if (swaps) {
        for (const [colSide, litSide] of [
          [n.left, n.right],
          [n.right, n.left],
        ] as const) {
          if (!isObject(colSide) || !isObject(litSide) || colSide.type !== 'column_ref') continue;
          const alts = literalAlternatives(litSide, columnValues(colSide, aliases, schema)?.values);
          if (alts.length) sites.push({ kind: 'literal', alternatives: alts.map((v) => () => setLiteral(litSide, v)) });
        }
      }
    }
    if (n.type === 'aggr_func' && typeof n.name === 'string') {
      const swaps = AGGREGATE_SWAPS[n.name.toUpperCase()];
      if (swaps) sites.push({ kind: 'aggregate', alternatives: swaps.map((s) => () => void (n.name = s)) });
    }
    if (n.type === 'select' || Array.isArray(n.columns)) selectSites(n);
    for (const v of Object.values(n)) visit(v);
  };
  const otherColumns = (ref: Node): string[] => {
    const table = tableOf(ref, aliases, schema);
    const col = columnName(ref)?.toLowerCase();
    const cols = table ? (schema.tables.get(table) ?? []) : [];
    return cols.map((c) => c.name).filter((c) => c.toLowerCase() !== col);
  };
  const selectSites = (s: Node): void => {
    sites.push({ kind: 'distinct', alternatives: [() => void (s.distinct = s.distinct ? null : 'DISTINCT')] });
    const limit = s.limit?.value?.[0];
    if (isObject(limit) && limit.type === 'number' && s.limit.value.length === 1) {
      sites.push({
        kind: 'limit',
        alternatives: [
          () => void (limit.value = Number(limit.value) + 1),
          () => void (s.limit = { seperator: '', value: [] }),
        ],
      });
    }
    for (const o of Array.isArray(s.orderby) ? s.orderby : []) {
      sites.push({ kind: 'order', alternatives: [() => void (o.type = o.type === 'DESC' ? 'ASC' : 'DESC')] });
    }
    for (const f of Array.isArray(s.from) ? s.from : []) {
      const on = f?.on;
      if (!isObject(on) || on.type !== 'binary_expr' || on.operator !== '=') continue;
      for (const side of [on.left, on.right]) {
        if (!isObject(side) || side.type !== 'column_ref') continue;
        const others = otherColumns(side).slice(0, 2);
        sites.push({ kind: 'join-key', alternatives: others.map((c) => () => void (side.column = c)) });
      }
    }
    for (const c of Array.isArray(s.columns) ? s.columns : []) {
      const e = c?.expr;
      if (!isObject(e) || e.type !== 'column_ref' || columnName(e) === '*') continue;
      const others = otherColumns(e).slice(0, 2);
      sites.push({ kind: 'column', alternatives: others.map((o) => () => void (e.column = o)) });
    }
  };
  visit(ast);
  return sites;
}

function nodeToSql(node: QueryNode): string {
  if (node.kind === 'select') return selectToSql(node.ast);
  return `${nodeToSql(node.left)} ${node.op.toUpperCase()} ${nodeToSql(node.right)}`;
}

/** The selects of a query, in order (a set query's arms left to right). */
function selects(node: QueryNode): SelectAst[] {
  return node.kind === 'select' ? [node.ast] : [...selects(node.left), ...selects(node.right)];
}

interface Neighbour {
  kind: NeighbourKind;
  sql: string;
}

interface NeighbourSet {
  /** The gold as node-sql-parser prints it back (the neighbours' spelling); undefined when it cannot be changed. */
  printed?: string;
  neighbours: Neighbour[];
}

/**
 * Up to `max` distinct neighbours of `gold` (chosen with `rng` when there are more), none textually the gold.
 * The caller checks that `printed` runs like the gold before trusting the neighbours.
 */
export function neighboursOf(gold: string, schema: NeighbourSchema, rng: Rng, max = 24): NeighbourSet {
  const parsed = parseSql(gold);
  if (!parsed.ok || parsed.subqueries.size > 0) return { neighbours: [] };
  let printed: string;
  try {
    printed = nodeToSql(parsed.query);
  } catch {
    return { neighbours: [] };
  }
  const fresh = (): QueryNode => structuredClone(parsed.query);
  const sitesOf = (q: QueryNode) => selects(q).flatMap((s) => collectSites(s, schema));
  const all: [number, number, string][] = [];
  sitesOf(fresh()).forEach((site, i) => site.alternatives.forEach((_, a) => all.push([i, a, site.kind])));
  const seen = new Set([printed]);
  const out: Neighbour[] = [];
  for (const [i, a, kind] of rng.shuffle(all)) {
    if (out.length >= max) break;
    const q = fresh();
    const site = sitesOf(q)[i];
    try {
      site.alternatives[a]!();
      const sql = nodeToSql(q);
      if (seen.has(sql)) continue;
      seen.add(sql);
      out.push({ kind: kind as NeighbourKind, sql });
    } catch {
      // node-sql-parser cannot print this change: no neighbour from it
    }
  }
  return { printed, neighbours: out };
}

/** The literals each column is compared with in `sqls` (numbers with their ±1), by lower-cased column name (for
 *  the fuzzer's values). */
export function comparedLiterals(sqls: string[], into = new Map<string, Cell[]>()): Map<string, Cell[]> {
  const visit = (n: unknown): void => {
    if (Array.isArray(n)) {
      for (const x of n) visit(x);
      return;
    }
    if (!isObject(n)) return;
    const op = String(n.operator).toUpperCase();
    if (n.type === 'binary_expr' && (COMPARISON_SWAPS[op] || op === 'BETWEEN' || op === 'NOT BETWEEN')) {
      for (const [c, l] of [
        [n.left, n.right],
        [n.right, n.left],
      ]) {
        if (!isObject(c) || c.type !== 'column_ref' || !isObject(l)) continue;
        const name = columnName(c)?.toLowerCase();
        const items = l.type === 'expr_list' && Array.isArray(l.value) ? l.value : [l];
        for (const item of items) {
          const v = isObject(item) ? literalCell(item) : undefined;
          if (!name || v === undefined) continue;
          const list = into.get(name) ?? [];
          // A number's neighbours too: rows on the boundary tell > from >= and 30 from 31.
          const near = typeof v === 'bigint' ? [v, v - 1n, v + 1n] : typeof v === 'number' ? [v, v - 1, v + 1] : [v];
          for (const x of near) if (!list.includes(x)) list.push(x);
          into.set(name, list);
        }
      }
    }
    for (const v of Object.values(n)) visit(v);
  };
  for (const sql of sqls) {
    const p = parseSql(sql);
    if (p.ok) {
      visit(selects(p.query));
      for (const sub of p.subqueries.values()) visit(selects(sub));
    }
  }
  return into;
}
