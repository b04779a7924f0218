// Opening a user's database: prove it is SQLite before SQLite touches it, then open it so nothing can write.
// better-sqlite3 reads SQLITE_USE_URI when its addon first loads (lazily, on the first `new Database`); URIs let us
// pass `immutable=1`, the only way to read a WAL-mode file without SQLite creating -wal/-shm files beside it.
if (process.env.SQLITE_USE_URI === undefined) process.env.SQLITE_USE_URI = '1';
import Database from 'better-sqlite3';
import {
  openSync,
  readSync,
  closeSync,
  statSync,
  existsSync,
  readFileSync,
  realpathSync,
  mkdtempSync,
  copyFileSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pathToFileURL } from 'node:url';

export type OpenErrorKind = 'missing' | 'directory' | 'empty' | 'not-sqlite' | 'corrupt' | 'locked' | 'unreadable';

export class DatabaseOpenError extends Error {
  constructor(
    readonly kind: OpenErrorKind,
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'DatabaseOpenError';
  }
}

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** Bytes 18 and 19 of the header are the write/read format versions: 2 means WAL mode. */
const WAL_FORMAT = 2;

/** Reads the first 100 bytes (the database header) or throws a DatabaseOpenError saying what is wrong with `path`. */
function readHeader(path: string): Buffer {
  let st;
  try {
    st = statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new DatabaseOpenError('missing', path, `no such file: ${path}`);
    throw new DatabaseOpenError('unreadable', path, `cannot read ${path}: ${(err as Error).message}`);
  }
  if (st.isDirectory())
    throw new DatabaseOpenError('directory', path, `${path} is a directory, not a SQLite database file`);
  if (st.size === 0) throw new DatabaseOpenError('empty', path, `${path} is an empty file, not a SQLite database`);
  const head = Buffer.alloc(100);
  let fd: number | undefined;
  let n = 0;
  try {
    fd = openSync(path, 'r');
    n = readSync(fd, head, 0, head.length, 0);
  } catch (err) {
    throw new DatabaseOpenError('unreadable', path, `cannot read ${path}: ${(err as Error).message}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (n < HEADER.length || !head.subarray(0, HEADER.length).equals(HEADER)) {
    throw new DatabaseOpenError(
      'not-sqlite',
      path,
      `${path} is not a SQLite database (its first bytes are not "SQLite format 3")`,
    );
  }
  if (n < 100)
    throw new DatabaseOpenError('corrupt', path, `${path} is corrupt: the file is shorter than a SQLite header`);
  return head;
}

/** Throws a DatabaseOpenError that says plainly what is wrong with `path` unless it looks like a SQLite file. */
export function assertSqliteFile(path: string): void {
  readHeader(path);
}

/** Maps an error SQLite raised while opening or first reading a file to a DatabaseOpenError. */
function classifyOpenError(path: string, err: unknown): DatabaseOpenError {
  if (err instanceof DatabaseOpenError) return err;
  const code = (err as { code?: string }).code ?? '';
  const message = (err as Error)?.message ?? String(err);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new DatabaseOpenError(
      'locked',
      path,
      `${path} is locked by another process (database is locked); try again when it is released`,
    );
  }
  if (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB')) {
    return new DatabaseOpenError('corrupt', path, `${path} is corrupt: ${message}`);
  }
  return new DatabaseOpenError('unreadable', path, `cannot open ${path}: ${message}`);
}

/**
 * A WAL-mode file with no -wal beside it is fully checkpointed, so it can be read as immutable; any other way of
 * opening it read-only makes SQLite create -wal and -shm files in the user's directory.
 * With a -wal present a writer is (or was) live: open normally so its committed pages are seen; the files exist
 * already.
 */
function connect(path: string, head: Buffer, busyTimeoutMs: number): Database.Database {
  const wal = head[18] === WAL_FORMAT || head[19] === WAL_FORMAT;
  if (wal && existsSync(path + '-wal') && !existsSync(path + '-shm')) {
    // SQLite would create the -shm beside the user's file to read the -wal: read a snapshot copy of both instead.
    return snapshotCopy(path, busyTimeoutMs);
  }
  if (!wal || existsSync(path + '-wal')) {
    return new Database(path, { readonly: true, fileMustExist: true, timeout: busyTimeoutMs });
  }
  try {
    return new Database(`${pathToFileURL(path).href}?mode=ro&immutable=1`, {
      readonly: true,
      fileMustExist: true,
      timeout: busyTimeoutMs,
    });
  } catch (err) {
    // Without URI support the string is taken as a (missing, read-only, so never created) file name.
    if ((err as { code?: string }).code !== 'SQLITE_CANTOPEN') throw err;
  }
  // Last resort: an in-memory copy with the header switched to rollback mode, which memory databases require.
  const bytes = readFileSync(path);
  bytes[18] = 1;
  bytes[19] = 1;
  return new Database(bytes, { readonly: true });
}

const snapshotDirs: string[] = [];
process.on('exit', () => {
  for (const d of snapshotDirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A WAL database whose -wal has no -shm beside it (a writer crashed, or the files were copied): the database and its
 * -wal are copied into a private temporary folder and that copy is opened, so the latest committed rows are read and
 * nothing is created beside the user's file. The handle reads a snapshot taken now (the handle cache reopens it when
 * either file changes).
 */
function snapshotCopy(path: string, busyTimeoutMs: number): Database.Database {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-snapshot-'));
  snapshotDirs.push(dir);
  const copy = join(dir, 'snapshot.sqlite');
  copyFileSync(path, copy);
  copyFileSync(path + '-wal', copy + '-wal');
  // Our own copy: opened read-write so SQLite can make the copy's -shm (query_only is set on it like on any handle).
  return new Database(copy, { fileMustExist: true, timeout: busyTimeoutMs });
}

/**
 * Opens `path` read-only with writes refused by the engine (read-only handle plus `PRAGMA query_only`),
 * and reads the schema once so a corrupt or locked file fails here rather than on the first query. A symbolic link is
 * resolved first, so the -wal beside the real file is the one read and nothing is created beside the link.
 */
export function openReadOnly(linkOrPath: string, opts: { busyTimeoutMs?: number } = {}): Database.Database {
  let path = linkOrPath;
  try {
    path = realpathSync(linkOrPath);
  } catch {
    // a missing file: readHeader says so with the path the caller gave
  }
  const head = readHeader(path);
  let db: Database.Database | undefined;
  try {
    db = connect(path, head, opts.busyTimeoutMs ?? 1000);
    db.pragma('query_only = ON');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db?.close();
    throw classifyOpenError(path, err);
  }
}
