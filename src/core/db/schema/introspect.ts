// Reads tables, views, columns, keys, row counts and sample rows from a SQLite file opened read-only.
import type Database from 'better-sqlite3';
import { openReadOnly } from '../open';
import type { Cell } from '../types';
import type { SchemaInfo, TableInfo, ColumnInfo, ForeignKeyInfo } from './types';
import { quoteIdent } from './quote';

interface IntrospectOptions {
  /** Rows to sample per table or view (default 3; 0 for none). */
  sampleRows?: number;
  /** Count rows per table (default true). Counting scans each table, so huge databases may want it off. */
  countRows?: boolean;
}

export const DEFAULT_SAMPLE_ROWS = 3;

interface MasterRow {
  name: string;
  type: 'table' | 'view';
  sql: string | null;
}
interface XInfoRow {
  name: string;
  type: string;
  notnull: number;
  pk: number;
  hidden: number;
}
interface FkRow {
  id: number;
  seq: number;
  table: string;
  from: string;
  to: string | null;
}

/** Opens `dbPath` read-only (throws DatabaseOpenError for files that are not usable databases) and describes it. */
export function introspectSchema(dbPath: string, opts: IntrospectOptions = {}): SchemaInfo {
  const db = openReadOnly(dbPath);
  try {
    return introspectHandle(db, opts);
  } finally {
    db.close();
  }
}

/** Describes an already-open connection; tables and views in sqlite_master order (creation order). */
function introspectHandle(db: Database.Database, opts: IntrospectOptions = {}): SchemaInfo {
  const sampleRows = Math.max(0, Math.floor(opts.sampleRows ?? DEFAULT_SAMPLE_ROWS));
  const countRows = opts.countRows ?? true;
  const master = db
    .prepare(
      "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE " +
        "'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
    )
    .all() as MasterRow[];
  return { tables: master.map((m) => describe(db, m, sampleRows, countRows)) };
}

function describe(db: Database.Database, m: MasterRow, sampleRows: number, countRows: boolean): TableInfo {
  const q = quoteIdent(m.name);
  let columns: ColumnInfo[] = [];
  try {
    // table_xinfo also lists generated columns; hidden = 1 marks virtual-table internals, which queries cannot name.
    columns = (db.prepare(`PRAGMA table_xinfo(${q})`).all() as XInfoRow[])
      .filter((c) => c.hidden !== 1)
      .map((c) => ({ name: c.name, type: c.type ?? '', notNull: c.notnull === 1, pkIndex: c.pk }));
  } catch {
    /* a view whose tables are gone: keep the name, show no columns */
  }
  const primaryKey = columns
    .filter((c) => c.pkIndex > 0)
    .sort((a, b) => a.pkIndex - b.pkIndex)
    .map((c) => c.name);
  const foreignKeys = m.type === 'table' ? readForeignKeys(db, q) : [];
  return {
    name: m.name,
    kind: m.type,
    columns,
    primaryKey,
    foreignKeys,
    rowCount: countRows
      ? tryGet(() => Number((db.prepare(`SELECT count(*) AS n FROM ${q}`).get() as { n: number }).n))
      : null,
    sampleRows:
      sampleRows > 0
        ? (tryGet(
            () => db.prepare(`SELECT * FROM ${q} LIMIT ${sampleRows}`).raw(true).safeIntegers(false).all() as Cell[][],
          ) ?? [])
        : [],
    sql: m.sql ?? '',
  };
}

function readForeignKeys(db: Database.Database, quotedTable: string): ForeignKeyInfo[] {
  const rows = tryGet(() => db.prepare(`PRAGMA foreign_key_list(${quotedTable})`).all() as FkRow[]) ?? [];
  const byId = new Map<number, FkRow[]>();
  for (const r of rows) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
  // SQLite lists keys newest-first (highest id first); declaration order reads better.
  return [...byId.entries()]
    .sort((a, b) => b[0] - a[0])
    .map(([, parts]) => {
      parts.sort((a, b) => a.seq - b.seq);
      return {
        from: parts.map((p) => p.from),
        table: parts[0].table,
        to: parts.every((p) => p.to) ? parts.map((p) => p.to as string) : [],
      };
    });
}

function tryGet<T>(f: () => T): T | null {
  try {
    return f();
  } catch {
    return null;
  }
}
