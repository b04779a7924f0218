// Introspection through the sandbox pool: the same SchemaInfo as introspectSchema(), but every query runs in a
// killable worker process under a time limit. The editor uses this so a huge database never blocks the extension
// host: counting a billion-row table is cut off at its budget (the count then reads null) instead of freezing the UI.
import type { SqlPool } from '../pool';
import type { Cell, ExecResult } from '../types';
import { DatabaseOpenError } from '../open';
import type { ColumnInfo, ForeignKeyInfo, SchemaInfo, TableInfo } from './types';
import { quoteIdent } from './quote';
import { DEFAULT_SAMPLE_ROWS } from './introspect';

export interface PoolIntrospectOptions {
  /** Rows to sample per table or view (default 3; 0 for none). */
  sampleRows?: number;
  /** Count rows per table (default true). */
  countRows?: boolean;
  /** Budget of each structure query, ms (default 10 s). */
  timeoutMs?: number;
  /** Budget of each row count and sample query, ms (default 3 s); past it the count is null. */
  countTimeoutMs?: number;
}

/** Structure queries return whole catalogs and CREATE statements: no row or cell caps. */
const ALL = { maxRows: Infinity, maxCellChars: 10_000_000 } as const;

const MASTER_SQL =
  "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view') " +
  "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid";

/** A string literal for SQL text (table-valued PRAGMA functions take the table name as an argument). */
function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function openFailure(dbPath: string, r: ExecResult): Error {
  if (r.openErrorKind) return new DatabaseOpenError(r.openErrorKind, dbPath, r.error ?? `cannot open ${dbPath}`);
  return new Error(`cannot read the schema of ${dbPath}: ${r.error ?? 'unknown error'}`);
}

type Row = Cell[];

function columnsFrom(rows: Row[]): ColumnInfo[] {
  // (name, type, notnull, pk, hidden); hidden = 1 marks virtual-table internals, which queries cannot name.
  return rows
    .filter((r) => Number(r[4]) !== 1)
    .map((r) => ({
      name: String(r[0]),
      type: r[1] == null ? '' : String(r[1]),
      notNull: Number(r[2]) === 1,
      pkIndex: Number(r[3]),
    }));
}

function foreignKeysFrom(rows: Row[]): ForeignKeyInfo[] {
  // (id, seq, table, from, to); SQLite lists keys newest-first (highest id first), declaration order reads better.
  const byId = new Map<number, Row[]>();
  for (const r of rows) byId.set(Number(r[0]), [...(byId.get(Number(r[0])) ?? []), r]);
  return [...byId.entries()]
    .sort((a, b) => b[0] - a[0])
    .map(([, parts]) => {
      parts.sort((a, b) => Number(a[1]) - Number(b[1]));
      return {
        from: parts.map((p) => String(p[3])),
        table: String(parts[0][2]),
        to: parts.every((p) => p[4] != null) ? parts.map((p) => String(p[4])) : [],
      };
    });
}

/**
 * Describes `dbPath` with queries run by `pool`. Rejects with a DatabaseOpenError when the file is not a usable
 * database. Tables whose columns cannot be read (a view over a dropped table) keep their name with no columns.
 */
export async function introspectViaPool(
  pool: SqlPool,
  dbPath: string,
  opts: PoolIntrospectOptions = {},
): Promise<SchemaInfo> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const countTimeoutMs = opts.countTimeoutMs ?? 3000;
  const sampleRows = Math.max(0, Math.floor(opts.sampleRows ?? DEFAULT_SAMPLE_ROWS));
  const countRows = opts.countRows ?? true;
  const master = await pool.exec({ db: dbPath, sql: MASTER_SQL, timeoutMs, ...ALL });
  if (!master.ok) throw openFailure(dbPath, master);
  const entries = master.rows.map((r) => ({
    name: String(r[0]),
    kind: r[1] === 'view' ? ('view' as const) : ('table' as const),
    sql: r[2] == null ? '' : String(r[2]),
  }));
  if (entries.length === 0) return { tables: [] };

  // One query per table and kind keeps a broken view from hiding every other table's columns.
  const structure = await pool.execBatch(
    entries
      .flatMap((e) => [
        {
          db: dbPath,
          sql: `SELECT name, type, "notnull", pk, hidden FROM pragma_table_xinfo(${literal(e.name)}) ORDER BY cid`,
          timeoutMs,
          ...ALL,
        },
        e.kind === 'table'
          ? {
              db: dbPath,
              sql: `SELECT id, seq, "table", "from", "to" FROM pragma_foreign_key_list(${literal(e.name)})`,
              timeoutMs,
              ...ALL,
            }
          : null,
      ])
      .filter((r): r is NonNullable<typeof r> => r !== null),
  );

  const extra = await pool.execBatch(
    entries.flatMap((e) => [
      ...(countRows
        ? [{ db: dbPath, sql: `SELECT count(*) FROM ${quoteIdent(e.name)}`, timeoutMs: countTimeoutMs }]
        : []),
      ...(sampleRows > 0
        ? [
            {
              db: dbPath,
              sql: `SELECT * FROM ${quoteIdent(e.name)} LIMIT ${sampleRows}`,
              timeoutMs: countTimeoutMs,
              maxRows: sampleRows,
              maxCellChars: 10_000_000,
            },
          ]
        : []),
    ]),
  );

  let s = 0;
  let x = 0;
  const tables: TableInfo[] = entries.map((e) => {
    const cols = structure[s++];
    const fks = e.kind === 'table' ? structure[s++] : null;
    const count = countRows ? extra[x++] : null;
    const sample = sampleRows > 0 ? extra[x++] : null;
    const columns = cols.ok ? columnsFrom(cols.rows) : [];
    return {
      name: e.name,
      kind: e.kind,
      columns,
      primaryKey: columns
        .filter((c) => c.pkIndex > 0)
        .sort((a, b) => a.pkIndex - b.pkIndex)
        .map((c) => c.name),
      foreignKeys: fks?.ok ? foreignKeysFrom(fks.rows) : [],
      rowCount: count?.ok && count.rows.length === 1 ? Number(count.rows[0][0]) : null,
      sampleRows: sample?.ok ? sample.rows : [],
      sql: e.sql,
    };
  });
  return { tables };
}
