// What a test-suite variant is built from: the original database's schema statements, its tables' columns and
// foreign keys in an order parents-first, and samples of its rows and of each column's values with their counts.
import type Database from 'better-sqlite3';
import { openReadOnly } from '../../db/open';
import type { Cell } from '../../db/types';

export interface ColumnInfo {
  name: string;
  /** Declared type, as written. */
  type: string;
  affinity: 'integer' | 'real' | 'numeric' | 'text' | 'blob';
  notNull: boolean;
  /** 1-based position in the primary key, 0 when not in it. */
  pk: number;
}

interface ForeignKey {
  /** Child columns. */
  from: string[];
  parent: string;
  /** Parent columns (the parent's primary key when the schema leaves them out). */
  to: string[];
}

interface ValueCount {
  value: Cell;
  count: number;
}

export interface TableProfile {
  name: string;
  /** Columns an INSERT writes (generated columns left out). */
  columns: ColumnInfo[];
  foreignKeys: ForeignKey[];
  rowCount: number;
  /** Up to ROW_SAMPLE rows, column values in `columns` order; INTEGERs as bigint, so they are written back as such. */
  rows: Cell[][];
  /** Per column (same order): its most frequent values with their counts, most frequent first. */
  values: ValueCount[][];
}

export interface SourceProfile {
  encoding: string;
  /** Tables, views and indexes, in creation order: run before the rows are written. */
  schema: string[];
  /** Triggers: run after the rows are written, so they do not fire on the variant's own inserts. */
  triggers: string[];
  /** Parents before children where the foreign keys allow it; otherwise in creation order. */
  tables: TableProfile[];
}

const ROW_SAMPLE = 300;
const VALUE_SAMPLE = 200;

export const quoteId = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** SQLite's column affinity rules (https://www.sqlite.org/datatype3.html §3.1). */
function affinityOf(declared: string): ColumnInfo['affinity'] {
  const t = declared.toUpperCase();
  if (t.includes('INT')) return 'integer';
  if (/CHAR|CLOB|TEXT/.test(t)) return 'text';
  if (t === '' || t.includes('BLOB')) return 'blob';
  if (/REAL|FLOA|DOUB/.test(t)) return 'real';
  return 'numeric';
}

function tableColumns(db: Database.Database, table: string): ColumnInfo[] {
  const rows = db.prepare(`PRAGMA table_xinfo(${quoteId(table)})`).all() as {
    name: string;
    type: string;
    notnull: number;
    pk: number;
    hidden: number;
  }[];
  return rows
    .filter((r) => r.hidden === 0)
    .map((r) => ({ name: r.name, type: r.type, affinity: affinityOf(r.type), notNull: r.notnull === 1, pk: r.pk }));
}

function foreignKeys(db: Database.Database, table: string, pkOf: (t: string) => string[]): ForeignKey[] {
  const rows = db.prepare(`PRAGMA foreign_key_list(${quoteId(table)})`).all() as {
    id: number;
    seq: number;
    table: string;
    from: string;
    to: string | null;
  }[];
  const byId = new Map<number, { parent: string; from: string[]; to: (string | null)[] }>();
  for (const r of rows) {
    const fk = byId.get(r.id) ?? { parent: r.table, from: [], to: [] };
    fk.from[r.seq] = r.from;
    fk.to[r.seq] = r.to;
    byId.set(r.id, fk);
  }
  return [...byId.values()].map((fk) => ({
    parent: fk.parent,
    from: fk.from,
    to: fk.to.some((t) => t === null) ? pkOf(fk.parent) : (fk.to as string[]),
  }));
}

/** Parents first (Kahn's order, ties in creation order); tables on a cycle keep their creation order. */
function parentsFirst(tables: TableProfile[]): TableProfile[] {
  const byName = new Map(tables.map((t) => [t.name.toLowerCase(), t]));
  const placed = new Set<string>();
  const out: TableProfile[] = [];
  while (out.length < tables.length) {
    const ready = tables.find(
      (t) =>
        !placed.has(t.name.toLowerCase()) &&
        t.foreignKeys.every((fk) => {
          const p = fk.parent.toLowerCase();
          return p === t.name.toLowerCase() || !byName.has(p) || placed.has(p);
        }),
    );
    const next = ready ?? tables.find((t) => !placed.has(t.name.toLowerCase()))!;
    placed.add(next.name.toLowerCase());
    out.push(next);
  }
  return out;
}

/** Reads the profile of the database at `path` (opened read-only). */
export function readSourceProfile(path: string): SourceProfile {
  const db = openReadOnly(path);
  try {
    const encoding = String(db.pragma('encoding', { simple: true }));
    const master = db
      .prepare('SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid')
      .all() as { type: string; name: string; sql: string }[];
    const schema: string[] = [];
    const triggers: string[] = [];
    const names: string[] = [];
    for (const m of master) {
      if (m.name.startsWith('sqlite_')) continue; // sqlite_sequence, sqlite_stat*: SQLite makes its own
      if (m.type === 'trigger') triggers.push(m.sql);
      else schema.push(m.sql);
      if (m.type === 'table' && !/^\s*CREATE\s+VIRTUAL\b/i.test(m.sql)) names.push(m.name);
    }
    const columnsOf = new Map(names.map((n) => [n.toLowerCase(), tableColumns(db, n)]));
    const pkOf = (t: string) =>
      (columnsOf.get(t.toLowerCase()) ?? [])
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name);
    const tables = names.map((name): TableProfile => {
      const columns = columnsOf.get(name.toLowerCase())!;
      const q = quoteId(name);
      const list = columns.map((c) => quoteId(c.name)).join(', ');
      const rowCount = Number((db.prepare(`SELECT count(*) AS n FROM ${q}`).get() as { n: number }).n);
      const rows = columns.length
        ? (db.prepare(`SELECT ${list} FROM ${q} LIMIT ${ROW_SAMPLE}`).raw().safeIntegers().all() as Cell[][])
        : [];
      const values = columns.map((c) => {
        const col = quoteId(c.name);
        const sql =
          `SELECT ${col}, count(*) FROM ${q} WHERE ${col} IS NOT NULL GROUP BY ${col} ` +
          `ORDER BY count(*) DESC, ${col} LIMIT ${VALUE_SAMPLE}`;
        const got = db.prepare(sql).raw().safeIntegers().all() as [Cell, bigint][];
        return got.map(([value, count]) => ({ value, count: Number(count) }));
      });
      return { name, columns, foreignKeys: foreignKeys(db, name, pkOf), rowCount, rows, values };
    });
    return { encoding, schema, triggers, tables: parentsFirst(tables) };
  } finally {
    db.close();
  }
}
