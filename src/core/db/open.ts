// Opening a user's database: prove it is SQLite before SQLite touches it, then open it so nothing can write.
import Database from 'better-sqlite3';
import { openSync, readSync, closeSync, statSync } from 'node:fs';

export type OpenErrorKind = 'missing' | 'directory' | 'empty' | 'not-sqlite' | 'corrupt' | 'locked' | 'unreadable';

export class DatabaseOpenError extends Error {
  constructor(readonly kind: OpenErrorKind, readonly path: string, message: string) {
    super(message);
    this.name = 'DatabaseOpenError';
  }
}

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** Throws a DatabaseOpenError that says plainly what is wrong with `path` unless it looks like a SQLite file. */
export function assertSqliteFile(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new DatabaseOpenError('missing', path, `no such file: ${path}`);
    throw new DatabaseOpenError('unreadable', path, `cannot read ${path}: ${(err as Error).message}`);
  }
  if (st.isDirectory()) throw new DatabaseOpenError('directory', path, `${path} is a directory, not a SQLite database file`);
  if (st.size === 0) throw new DatabaseOpenError('empty', path, `${path} is an empty file, not a SQLite database`);
  const head = Buffer.alloc(HEADER.length);
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    readSync(fd, head, 0, HEADER.length, 0);
  } catch (err) {
    throw new DatabaseOpenError('unreadable', path, `cannot read ${path}: ${(err as Error).message}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (!head.equals(HEADER)) {
    throw new DatabaseOpenError('not-sqlite', path, `${path} is not a SQLite database (its first bytes are not "SQLite format 3")`);
  }
}

/** Maps an error SQLite raised while opening or first reading a file to a DatabaseOpenError. */
export function classifyOpenError(path: string, err: unknown): DatabaseOpenError {
  if (err instanceof DatabaseOpenError) return err;
  const code = (err as { code?: string }).code ?? '';
  const message = (err as Error)?.message ?? String(err);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new DatabaseOpenError('locked', path, `${path} is locked by another process (database is locked); try again when it is released`);
  }
  if (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB')) {
    return new DatabaseOpenError('corrupt', path, `${path} is corrupt: ${message}`);
  }
  return new DatabaseOpenError('unreadable', path, `cannot open ${path}: ${message}`);
}

/**
 * Opens `path` read-only with writes refused by the engine (read-only handle plus `PRAGMA query_only`),
 * and reads the schema once so a corrupt or locked file fails here rather than on the first query.
 */
export function openReadOnly(path: string, opts: { busyTimeoutMs?: number } = {}): Database.Database {
  assertSqliteFile(path);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: opts.busyTimeoutMs ?? 1000 });
    db.pragma('query_only = ON');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db?.close();
    throw classifyOpenError(path, err);
  }
}
