// Runs one statement on an open read-only handle with every cap applied; used inside the SQL worker process.
import type Database from 'better-sqlite3';
import type { Cell, ExecRequest, ExecResult, StorageSet, ErrorClass } from './types';
import { whyNotReadOnly, whyPragmaNotAllowed, isMultiStatementError, leadingKeyword } from './guard';
import { unresolvedDoubleQuoted, requoteAsString } from './doubleQuotedStrings';
import { DEFAULT_MAX_ROWS, DEFAULT_MAX_CELL_CHARS, ROW_COUNT_CEILING, MAX_KEPT_CELLS, MAX_KEPT_BYTES } from './limits';

export function failure(
  errorClass: ErrorClass,
  error: string,
  ms: number,
  extra: Partial<ExecResult> = {},
): ExecResult {
  return { ok: false, errorClass, error, columns: [], rows: [], rowCount: 0, truncated: false, ms, ...extra };
}

/** SQLite result codes that mean the statement asked for more memory or size than the sandbox allows. */
function isResourceError(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code.startsWith('SQLITE_NOMEM') || code.startsWith('SQLITE_TOOBIG') || err instanceof RangeError;
}

/** SQLite's message, as models are trained to read it ("no such column: x"). */
function sqliteMessage(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).replace(/^SqliteError:\s*/, '');
}

/** The safe-integer range as bigints, made once: an INTEGER cell inside it becomes a number. */
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

function emptyStorage(): StorageSet {
  return { integer: false, real: false, text: false, blob: false, null: false };
}

/**
 * Rows `sql` produces, counted up to ROW_COUNT_CEILING by SQLite itself, or null when the statement cannot be
 * wrapped as a subquery (PRAGMA, EXPLAIN) or the wrapped form fails to prepare; the caller then counts by iterating.
 */
function countInSqlite(db: Database.Database, sql: string): number | null {
  const keyword = leadingKeyword(sql);
  if (keyword !== 'SELECT' && keyword !== 'WITH' && keyword !== 'VALUES') return null;
  const body = sql.replace(/[\s;]+$/u, '');
  try {
    const counter = prepareWithStringFallback(
      db,
      `SELECT count(*) FROM (SELECT 1 FROM (${body}\n) LIMIT ${ROW_COUNT_CEILING})`,
    );
    if (!counter.readonly) return null;
    return Number(counter.pluck().get());
  } catch {
    return null;
  }
}

/** Rows, cells and characters stepped past the row cap before counting is left to SQLite instead. */
const ONWARD_MAX_ROWS = 5000;
const ONWARD_MAX_CELLS = 50_000;
const ONWARD_MAX_CHARS = 1 << 20;

/**
 * Keeps stepping a statement already past its row cap, without keeping rows, and returns how many rows it produced
 * in all — or null, with the statement reset, once that has cost more than a few thousand small rows. Stepping on
 * is far cheaper than running a sorting or grouping query a second time to count it; a long scan is cheaper to
 * count in SQLite (countInSqlite), which never builds the rows in JavaScript.
 */
function countOnward(rows: Iterator<unknown[]>, seen: number, columns: number): number | null {
  const maxRows = Math.min(ONWARD_MAX_ROWS, Math.ceil(ONWARD_MAX_CELLS / Math.max(1, columns)));
  let chars = 0;
  for (let n = 0; n < maxRows; n++) {
    const step = rows.next();
    if (step.done) return seen + n;
    for (const v of step.value) if (typeof v === 'string' || v instanceof Uint8Array) chars += v.length;
    if (chars > ONWARD_MAX_CHARS) break;
  }
  rows.return?.();
  return null;
}

/** Runs the statement again from the start, counting its rows up to ROW_COUNT_CEILING. */
function countByIterating(stmt: Database.Statement): number {
  let n = 0;
  for (const _row of stmt.iterate()) if (++n >= ROW_COUNT_CEILING) break;
  return n;
}

/** Prepares `sql`, treating unresolvable "double-quoted" names as strings the way Python's sqlite3 does. */
function prepareWithStringFallback(db: Database.Database, sql: string): Database.Statement {
  for (let attempt = 0; ; attempt++) {
    try {
      return db.prepare(sql);
    } catch (err) {
      const name = attempt < 32 ? unresolvedDoubleQuoted(sqliteMessage(err)) : null;
      const next = name === null ? sql : requoteAsString(sql, name);
      if (next === sql) throw err;
      sql = next;
    }
  }
}

/**
 * Connection settings a statement could change. Any statement that can reach a PRAGMA has the word in its text (a
 * view or trigger cannot hold one), so after such a statement — allowed, refused or failed — the handle gets back the
 * settings it had before its first statement: one statement can never change another's result. case_sensitive_like
 * has no getter; it is set back to SQLite's default (off).
 */
const SNAPSHOT_SETTINGS = [
  'reverse_unordered_selects',
  'full_column_names',
  'short_column_names',
  'locking_mode',
  'foreign_keys',
  'recursive_triggers',
  'automatic_index',
  'cell_size_check',
  'ignore_check_constraints',
  'trusted_schema',
  'defer_foreign_keys',
  'read_uncommitted',
  'cache_size',
  'temp_store',
  'busy_timeout',
  'analysis_limit',
  'query_only',
] as const;
/** One row with every tracked setting, read through SQLite's pragma table functions (one prepared statement). */
const SETTINGS_QUERY = `SELECT ${SNAPSHOT_SETTINGS.map((name) => `(SELECT * FROM pragma_${name})`).join(', ')}`;
const settingsReaders = new WeakMap<Database.Database, Database.Statement>();
const snapshots = new WeakMap<Database.Database, unknown[]>();
const QUERY_ONLY = SNAPSHOT_SETTINGS.indexOf('query_only');

function currentSettings(db: Database.Database): unknown[] {
  let reader = settingsReaders.get(db);
  if (!reader) {
    reader = db.prepare(SETTINGS_QUERY).raw(true);
    settingsReaders.set(db, reader);
  }
  return reader.get() as unknown[];
}

function snapshotOf(db: Database.Database): unknown[] {
  let snap = snapshots.get(db);
  if (!snap) {
    snap = currentSettings(db);
    snapshots.set(db, snap);
  }
  return snap;
}

/**
 * Puts every tracked setting back to its snapshot: case_sensitive_like (no getter) always, the others when they read
 * differently from the snapshot, query_only last (so the others can be set) and always back to ON.
 */
function resetConnectionSettings(db: Database.Database): void {
  db.pragma('case_sensitive_like = OFF');
  const snap = snapshotOf(db);
  const now = currentSettings(db);
  SNAPSHOT_SETTINGS.forEach((name, i) => {
    if (name === 'query_only' || now[i] === snap[i]) return;
    const value = snap[i];
    db.pragma(`${name} = ${typeof value === 'number' ? value : `'${String(value).replace(/'/g, "''")}'`}`);
  });
  if (now[QUERY_ONLY] !== 1) db.pragma('query_only = ON');
}

export function runStatement(db: Database.Database, req: ExecRequest): ExecResult {
  const touchesSettings = /pragma/i.test(req.sql);
  if (touchesSettings) snapshotOf(db);
  try {
    return runGuardedStatement(db, req);
  } finally {
    if (touchesSettings) resetConnectionSettings(db);
  }
}

function runGuardedStatement(db: Database.Database, req: ExecRequest): ExecResult {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const maxRows = req.maxRows ?? DEFAULT_MAX_ROWS;
  const maxCell = req.maxCellChars ?? DEFAULT_MAX_CELL_CHARS;
  const bigints = req.integersAsBigint === true;

  const pragmaProblem = whyPragmaNotAllowed(req.sql);
  if (pragmaProblem) return failure('rejected', pragmaProblem, elapsed());
  let stmt: Database.Statement;
  try {
    stmt = prepareWithStringFallback(db, req.sql);
  } catch (err) {
    if (isMultiStatementError(err)) {
      return failure('rejected', 'statement rejected: only one SQL statement per call is allowed', elapsed());
    }
    if (/^The supplied SQL string contains no statements/i.test(sqliteMessage(err))) {
      return failure('sql', 'no SQL statement to run (the input is empty or only comments)', elapsed());
    }
    return failure(isResourceError(err) ? 'resource' : 'sql', sqliteMessage(err), elapsed());
  }
  const why = whyNotReadOnly(req.sql, stmt);
  if (why) return failure('rejected', why, elapsed());

  const columns = stmt.columns().map((c) => c.name);
  const storage = columns.map(emptyStorage);
  const rows: Cell[][] = [];
  let rowCount = 0;
  let truncated = false;
  let cellsCut = false;
  let keptCells = 0;
  let keptBytes = 0;
  /** Past the row cap: the total when stepping on reached the end, null when the rest must be counted otherwise. */
  let onward: number | null | undefined;
  try {
    stmt.raw(true);
    stmt.safeIntegers(true);
    const iterator = stmt.iterate() as IterableIterator<unknown[]>;
    // Every way out resets the statement, so no read transaction stays open on the cached handle.
    try {
      for (let step = iterator.next(); !step.done; step = iterator.next()) {
        const raw = step.value;
        rowCount++;
        if (rows.length >= maxRows) {
          truncated = true;
          onward = countOnward(iterator, rowCount, columns.length);
          break;
        }
        const row: Cell[] = new Array(raw.length);
        for (let i = 0; i < raw.length; i++) {
          const v = raw[i];
          const s = storage[i];
          if (v === null) {
            s.null = true;
            row[i] = null;
          } else if (typeof v === 'bigint') {
            s.integer = true;
            row[i] = !bigints && v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v;
            keptBytes += 8;
          } else if (typeof v === 'number') {
            s.real = true;
            row[i] = v;
            keptBytes += 8;
          } else if (typeof v === 'string') {
            s.text = true;
            if (v.length > maxCell) {
              row[i] = v.slice(0, maxCell) + '…';
              truncated = cellsCut = true;
            } else row[i] = v;
            keptBytes += Math.min(v.length, maxCell);
          } else {
            s.blob = true;
            const b = v as Uint8Array;
            // a copy, so the big buffer can go
            if (b.length > maxCell) truncated = cellsCut = true;
            row[i] = b.length > maxCell ? b.slice(0, maxCell) : b;
            keptBytes += Math.min(b.length, maxCell);
          }
        }
        keptCells += raw.length;
        if (keptCells > MAX_KEPT_CELLS || keptBytes > MAX_KEPT_BYTES) {
          return failure(
            'resource',
            `result too large: more than ${MAX_KEPT_CELLS.toLocaleString('en-US')} cells ` +
              `or ${MAX_KEPT_BYTES / 2 ** 20} MiB kept (${rowCount} rows so far); add LIMIT or select fewer ` +
              `columns`,
            elapsed(),
          );
        }
        rows.push(row);
      }
    } finally {
      iterator.return?.();
    }
    if (onward !== undefined) {
      // The rest is counted by stepping on when it was short, else inside SQLite (the text as prepared, so the
      // double-quoted-string fallback is not redone), else by running it again.
      const total = onward ?? countInSqlite(db, stmt.source) ?? countByIterating(stmt);
      return {
        ok: true,
        errorClass: null,
        error: null,
        columns,
        rows,
        rowCount: Math.max(total, rowCount),
        truncated,
        cellsCut,
        ms: elapsed(),
        rowCountExact: total < ROW_COUNT_CEILING,
        columnStorage: storage,
      };
    }
  } catch (err) {
    if (isResourceError(err)) {
      return failure(
        'resource',
        `${sqliteMessage(err)} (resource limit: the sandbox caps memory and value size per query)`,
        elapsed(),
      );
    }
    if ((err as { code?: string }).code === 'SQLITE_READONLY' || /not authorized/i.test(sqliteMessage(err))) {
      return failure('rejected', `statement rejected: ${sqliteMessage(err)}`, elapsed());
    }
    return failure('sql', sqliteMessage(err), elapsed());
  }
  return {
    ok: true,
    errorClass: null,
    error: null,
    columns,
    rows,
    rowCount,
    truncated,
    cellsCut,
    ms: elapsed(),
    rowCountExact: true,
    columnStorage: storage,
  };
}
