// A statement's query plan: `EXPLAIN QUERY PLAN` run through the sandbox pool (the same guard as any statement, so a
// write is refused, never planned), its (id, parent, detail) rows built into a tree, each step classified, and the
// plain-language warnings the plan implies (a full scan of a large table, an automatic index, a big sort, a
// correlated subquery run once per row). No vscode: the CLI, the MCP server and the editor share it.
import type { SqlPool } from './pool';
import type { Cell, ErrorClass } from './types';
import type { OpenErrorKind } from './open';
import { stripLeadingNoise, unwrapExplain } from './guard';
import { quoteIdent } from './schema/quote';
import { tableAliases } from '../sql/completionContext';
import { DEFAULT_TIMEOUT_MS, ROW_COUNT_CEILING } from './limits';

/** What one step of a plan does. */
type PlanNodeKind =
  | 'scan'
  | 'search'
  | 'temp-btree'
  | 'subquery'
  | 'correlated-subquery'
  | 'materialize'
  | 'co-routine'
  | 'compound'
  | 'multi-index-or'
  | 'bloom-filter'
  | 'other';

/** How a SCAN or SEARCH reaches its rows. */
type PlanAccess =
  | 'table'
  | 'index'
  | 'covering-index'
  | 'primary-key'
  | 'automatic-index'
  | 'automatic-covering-index'
  | 'virtual-table'
  | 'constant-row';

export interface PlanNode {
  /** SQLite's id for the step (its address in the bytecode) and its parent's id (0 at the top). */
  id: number;
  parent: number;
  /** SQLite's own words, e.g. `SEARCH a USING INTEGER PRIMARY KEY (rowid=?)`. */
  detail: string;
  kind: PlanNodeKind;
  /** For scans and searches: the name in the plan (an alias when the query gives one). */
  name?: string;
  /** The schema table that name stands for, when it is one (aliases resolved from the statement's text). */
  table?: string;
  access?: PlanAccess;
  /** The index used (SQLite's name; none for an automatic index or the primary key). */
  index?: string;
  /** The constraint an index is searched with, e.g. `author_id=?`. */
  constraint?: string;
  /** For a temp B-tree: what it is for (`ORDER BY`, `GROUP BY`, `DISTINCT`, `RIGHT PART OF ORDER BY`…). */
  purpose?: string;
  /** Rows in `table`: from sqlite_stat1 when ANALYZE has run, else counted (up to PLAN_COUNT_CEILING). */
  rows?: number;
  /** False when the count stopped at its ceiling (rows is a lower bound). */
  rowsExact?: boolean;
  children: PlanNode[];
}

type PlanWarningKind = 'full-scan' | 'automatic-index' | 'temp-sort' | 'correlated-subquery';

interface PlanWarning {
  kind: PlanWarningKind;
  /** The step it is about. */
  nodeId: number;
  message: string;
}

export interface QueryPlan {
  /** The statement planned (as given, EXPLAIN prefixes removed). */
  sql: string;
  /** Top-level steps, in SQLite's order. */
  nodes: PlanNode[];
  warnings: PlanWarning[];
  /** Where the row counts came from: sqlite_stat1, counting, or nowhere (counts off or every count failed). */
  rowSource: 'stat1' | 'count' | 'none';
}

export type PlanResult =
  | { ok: true; plan: QueryPlan; ms: number }
  | { ok: false; errorClass: ErrorClass; error: string; openErrorKind?: OpenErrorKind; ms: number };

/** A table with at least this many rows is "large": reading all of it, or sorting what it yields, is worth a word. */
const LARGE_TABLE_ROWS = 10_000;
/** Row counts (when sqlite_stat1 has none) stop here; the count is then a lower bound. */
const PLAN_COUNT_CEILING = ROW_COUNT_CEILING;
/** Budget of each row count, ms: a count that runs past it leaves the table's size unknown. */
const COUNT_TIMEOUT_MS = 2000;

interface ExplainOptions {
  /** Budget of the EXPLAIN statement, ms (default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Look up the row counts of scanned tables (default true). */
  countRows?: boolean;
  /** Threshold for a "large" table (default LARGE_TABLE_ROWS). */
  largeRows?: number;
  signal?: AbortSignal;
}

/** Classifies one step by SQLite's detail text (sqlite3 src/where.c, select.c: sqlite3WhereExplainOneScan etc.). */
function classifyDetail(detail: string): Omit<PlanNode, 'id' | 'parent' | 'detail' | 'children'> {
  let m = /^SCAN (CONSTANT ROW)$/.exec(detail);
  if (m) return { kind: 'scan', access: 'constant-row' };
  m = /^SCAN (.+?) VIRTUAL TABLE INDEX\b/.exec(detail);
  if (m) return { kind: 'scan', name: m[1], access: 'virtual-table' };
  m = /^SCAN (.+?)(?: USING (COVERING )?INDEX (.+))?$/.exec(detail);
  if (m) {
    return m[3]
      ? { kind: 'scan', name: m[1], access: m[2] ? 'covering-index' : 'index', index: m[3] }
      : { kind: 'scan', name: m[1], access: 'table' };
  }
  m = /^SEARCH (.+?)(?: EXISTS)? USING (.+)$/.exec(detail);
  if (m) {
    const name = m[1];
    const how = m[2];
    const constraint = /\((.*)\)$/.exec(how)?.[1];
    if (/^(?:INTEGER )?PRIMARY KEY\b/.test(how)) return { kind: 'search', name, access: 'primary-key', constraint };
    const auto = /^AUTOMATIC (?:PARTIAL )?(COVERING )?INDEX\b/.exec(how);
    if (auto) {
      return {
        kind: 'search',
        name,
        access: auto[1] ? 'automatic-covering-index' : 'automatic-index',
        constraint,
      };
    }
    const idx = /^(COVERING )?INDEX (\S+)/.exec(how);
    if (idx) return { kind: 'search', name, access: idx[1] ? 'covering-index' : 'index', index: idx[2], constraint };
    if (/^VIRTUAL TABLE\b/.test(how)) return { kind: 'search', name, access: 'virtual-table' };
    return { kind: 'search', name };
  }
  m = /^USE TEMP B-TREE FOR (.+)$/.exec(detail);
  if (m) return { kind: 'temp-btree', purpose: m[1] };
  if (/^CORRELATED (?:SCALAR|LIST) SUBQUERY\b/.test(detail)) return { kind: 'correlated-subquery' };
  if (/^(?:SCALAR|LIST) SUBQUERY\b/.test(detail)) return { kind: 'subquery' };
  if (/^MATERIALIZE\b/.test(detail)) return { kind: 'materialize' };
  if (/^CO-ROUTINE\b/.test(detail)) return { kind: 'co-routine' };
  if (
    /^(?:COMPOUND QUERY|LEFT-MOST SUBQUERY|UNION ALL|UNION USING TEMP B-TREE|EXCEPT|INTERSECT|MERGE \()/.test(detail)
  ) {
    return { kind: 'compound' };
  }
  if (/^MULTI-INDEX OR$/.test(detail)) return { kind: 'multi-index-or' };
  if (/^(?:CREATE )?BLOOM FILTER\b/.test(detail)) return { kind: 'bloom-filter' };
  return { kind: 'other' };
}

/**
 * Builds the tree from SQLite's rows in their order: each row hangs under the row whose id is its parent (0 = top);
 * a row whose parent is unknown goes to the top rather than being lost.
 */
export function buildPlanTree(rows: readonly { id: number; parent: number; detail: string }[]): PlanNode[] {
  const byId = new Map<number, PlanNode>();
  const roots: PlanNode[] = [];
  for (const r of rows) {
    const node: PlanNode = { id: r.id, parent: r.parent, detail: r.detail, ...classifyDetail(r.detail), children: [] };
    byId.set(r.id, node);
    const parent = r.parent === 0 ? undefined : byId.get(r.parent);
    (parent ? parent.children : roots).push(node);
  }
  return roots;
}

/** Every node of the tree, depth first in SQLite's order. */
export function planNodes(nodes: readonly PlanNode[]): PlanNode[] {
  const out: PlanNode[] = [];
  const walk = (list: readonly PlanNode[]) => {
    for (const n of list) {
      out.push(n);
      walk(n.children);
    }
  };
  walk(nodes);
  return out;
}

function rowsText(n: number, exact = true): string {
  return `${exact ? '' : 'at least '}${n.toLocaleString('en-US')} row${n === 1 ? '' : 's'}`;
}

/** The largest known table read in a list of steps (and their descendants), or null. */
function largestRead(nodes: readonly PlanNode[]): PlanNode | null {
  let best: PlanNode | null = null;
  for (const n of planNodes(nodes)) if (n.rows !== undefined && (!best || n.rows > (best.rows ?? 0))) best = n;
  return best;
}

/** The plain-language warnings a plan implies; row counts on the nodes make them specific. */
function planWarnings(roots: readonly PlanNode[], largeRows = LARGE_TABLE_ROWS): PlanWarning[] {
  const warnings: PlanWarning[] = [];
  const visit = (siblings: readonly PlanNode[]) => {
    for (const n of siblings) {
      const what = n.table && n.name && n.table !== n.name ? `${n.table} (as ${n.name})` : (n.table ?? n.name);
      if (n.kind === 'scan' && (n.access === 'table' || n.access === 'index') && (n.rows ?? 0) >= largeRows) {
        warnings.push({
          kind: 'full-scan',
          nodeId: n.id,
          message:
            `Full scan of ${what}: every one of its ${rowsText(n.rows ?? 0, n.rowsExact)} is read. ` +
            'An index on the columns this query filters or joins ' +
            `${what} by would let SQLite search it instead.`,
        });
      }
      if (n.access === 'automatic-index' || n.access === 'automatic-covering-index') {
        const cols = (n.constraint ?? '').match(/[^\s=<>(),?]+(?=[=<>])/g) ?? [];
        const size = n.rows !== undefined ? ` (${rowsText(n.rows, n.rowsExact)})` : '';
        warnings.push({
          kind: 'automatic-index',
          nodeId: n.id,
          message:
            `Automatic index on ${what}${n.constraint ? ` (${n.constraint})` : ''}: SQLite builds a temporary index ` +
            `of ${n.table ?? n.name}${size} every time this query runs, because no index fits the lookup` +
            (n.table && cols.length
              ? `; CREATE INDEX ON ${quoteIdent(n.table)}(${cols.map(quoteIdent).join(', ')}) would keep one.`
              : '.'),
        });
      }
      if (n.kind === 'temp-btree' && /ORDER BY|GROUP BY|DISTINCT/.test(n.purpose ?? '')) {
        const big = largestRead(siblings);
        if (big && (big.rows ?? 0) >= largeRows) {
          warnings.push({
            kind: 'temp-sort',
            nodeId: n.id,
            message:
              `Sort for ${n.purpose} in a temporary B-tree over rows from ${big.table ?? big.name} ` +
              `(${rowsText(big.rows ?? 0, big.rowsExact)}): no index gives them in that order, so SQLite sorts ` +
              'them all before the first row comes back.',
          });
        }
      }
      if (n.kind === 'correlated-subquery') {
        const outer = siblings.find((s) => s.kind === 'scan' || s.kind === 'search');
        const per = outer
          ? `once for each row of ${outer.table ?? outer.name}` +
            (outer.rows !== undefined ? ` (up to ${rowsText(outer.rows, outer.rowsExact)})` : '')
          : 'once for each row of the outer query';
        warnings.push({
          kind: 'correlated-subquery',
          nodeId: n.id,
          message:
            `Correlated subquery: it refers to the outer query, so SQLite runs it ${per}. ` +
            'A join or a grouped subquery joined once often does the same work in one pass.',
        });
      }
      visit(n.children);
    }
  };
  visit(roots);
  return warnings;
}

/** `QUERY PLAN` and an indented tree as the sqlite3 shell draws it, row counts beside scans, then the warnings. */
export function renderPlanText(plan: QueryPlan): string {
  const lines = ['QUERY PLAN'];
  const walk = (nodes: readonly PlanNode[], prefix: string) => {
    nodes.forEach((n, i) => {
      const last = i === nodes.length - 1;
      const where =
        n.table && n.table !== n.name ? `${n.table}` : n.rows !== undefined ? (n.table ?? n.name ?? '') : '';
      const size = n.rows !== undefined ? `${where ? `${where}: ` : ''}${rowsText(n.rows, n.rowsExact)}` : where;
      lines.push(`${prefix}${last ? '`--' : '|--'}${n.detail}${size ? `  [${size}]` : ''}`);
      walk(n.children, prefix + (last ? '   ' : '|  '));
    });
  };
  walk(plan.nodes, '');
  if (plan.warnings.length) {
    lines.push('', 'Warnings:');
    for (const w of plan.warnings) lines.push(`- ${w.message}`);
  }
  return lines.join('\n');
}

/** The EXPLAIN QUERY PLAN statement for `sql` (an EXPLAIN prefix it already has is replaced). */
function explainStatement(sql: string): string {
  return `EXPLAIN QUERY PLAN\n${unwrapExplain(sql)}`;
}

function num(c: Cell): number {
  return typeof c === 'bigint' ? Number(c) : Number(c ?? 0);
}

/** Schema tables by lower-cased name, or an empty map when the catalog cannot be read. */
async function schemaTables(pool: SqlPool, db: string, signal?: AbortSignal): Promise<Map<string, string>> {
  const r = await pool.exec(
    {
      db,
      sql: "SELECT name FROM sqlite_schema WHERE type = 'table'",
      maxRows: Infinity,
      timeoutMs: COUNT_TIMEOUT_MS,
    },
    signal,
  );
  return new Map(r.ok ? r.rows.map((row) => [String(row[0]).toLowerCase(), String(row[0])]) : []);
}

/** Row counts sqlite_stat1 holds (the first number of any of a table's rows there), lower-cased names. */
async function stat1Counts(pool: SqlPool, db: string, signal?: AbortSignal): Promise<Map<string, number>> {
  const r = await pool.exec(
    {
      db,
      sql: 'SELECT tbl, max(CAST(stat AS INTEGER)) FROM sqlite_stat1 GROUP BY tbl',
      maxRows: Infinity,
      timeoutMs: COUNT_TIMEOUT_MS,
    },
    signal,
  );
  return new Map(r.ok ? r.rows.map((row) => [String(row[0]).toLowerCase(), num(row[1])]) : []);
}

/**
 * Runs EXPLAIN QUERY PLAN for `sql` in the sandbox and returns the tree with row counts and warnings. A statement the
 * sandbox would not run (a write, several statements, a settings PRAGMA) comes back `rejected`, as `exec` gives it.
 */
export async function explainQueryPlan(
  pool: SqlPool,
  db: string,
  sql: string,
  opts: ExplainOptions = {},
): Promise<PlanResult> {
  const started = performance.now();
  const body = unwrapExplain(sql);
  if (!stripLeadingNoise(body).replace(/;/g, '').trim()) {
    return { ok: false, errorClass: 'sql', error: 'no SQL statement to plan (the input is empty)', ms: 0 };
  }
  const r = await pool.exec(
    { db, sql: explainStatement(sql), maxRows: 10_000, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS },
    opts.signal,
  );
  if (!r.ok) {
    return {
      ok: false,
      errorClass: r.errorClass ?? 'sql',
      error: r.error ?? 'the plan could not be made',
      ...(r.openErrorKind ? { openErrorKind: r.openErrorKind } : {}),
      ms: performance.now() - started,
    };
  }
  const col = (name: string) => r.columns.indexOf(name);
  const [iId, iParent, iDetail] = [col('id'), col('parent'), col('detail')];
  const nodes = buildPlanTree(
    r.rows.map((row) => ({ id: num(row[iId]), parent: num(row[iParent]), detail: String(row[iDetail]) })),
  );
  const rowSource = opts.countRows === false ? 'none' : await annotateRows(pool, db, body, nodes, opts.signal);
  return {
    ok: true,
    plan: { sql: body, nodes, warnings: planWarnings(nodes, opts.largeRows), rowSource },
    ms: performance.now() - started,
  };
}

/** Resolves each scan's and search's table and sets its row count; returns where the counts came from. */
async function annotateRows(
  pool: SqlPool,
  db: string,
  sql: string,
  roots: PlanNode[],
  signal?: AbortSignal,
): Promise<QueryPlan['rowSource']> {
  const reads = planNodes(roots).filter((n) => n.name && (n.kind === 'scan' || n.kind === 'search'));
  if (!reads.length) return 'none';
  const tables = await schemaTables(pool, db, signal);
  const { aliases } = tableAliases(sql);
  for (const n of reads) {
    const name = (n.name ?? '').toLowerCase();
    const target = (aliases.get(name) ?? name).toLowerCase();
    // A name that is itself a table wins over an alias only when the statement does not alias it to another table.
    const table = tables.get(target) ?? tables.get(name);
    if (table) n.table = table;
  }
  const wanted = [...new Set(reads.flatMap((n) => (n.table ? [n.table] : [])))];
  if (!wanted.length) return 'none';
  const stat = await stat1Counts(pool, db, signal);
  const counts = new Map<string, { rows: number; exact: boolean }>();
  let source: QueryPlan['rowSource'] = 'none';
  for (const t of wanted) {
    const fromStat = stat.get(t.toLowerCase());
    if (fromStat !== undefined) {
      counts.set(t, { rows: fromStat, exact: true });
      source = 'stat1';
      continue;
    }
    const c = await pool.exec(
      {
        db,
        sql: `SELECT count(*) FROM (SELECT 1 FROM ${quoteIdent(t)} LIMIT ${PLAN_COUNT_CEILING})`,
        timeoutMs: COUNT_TIMEOUT_MS,
      },
      signal,
    );
    if (c.ok) {
      const rows = num(c.rows[0]?.[0] ?? 0);
      counts.set(t, { rows, exact: rows < PLAN_COUNT_CEILING });
      if (source === 'none') source = 'count';
    }
  }
  for (const n of reads) {
    const c = n.table ? counts.get(n.table) : undefined;
    if (c) {
      n.rows = c.rows;
      n.rowsExact = c.exact;
    }
  }
  return source;
}
