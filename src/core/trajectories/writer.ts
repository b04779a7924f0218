// Appends trajectory records to a JSONL file, one record per line. Each write() hands its whole line to the kernel
// before it resolves, so a killed process loses at most the record in flight. Records are validated first: a
// producer bug is caught where it happens, not by whoever reads the file later. Several processes may append to one
// file at once (the CLI and the editor share .quarry/trajectories/): each record is written under a lock file beside
// it (`<file>.lock`, holding the writer's pid; a dead writer's lock is taken over), so lines never interleave and a
// crash repair never cuts another writer's line.
import { basename, dirname, join } from 'node:path';
import { link, open, readdir, readFile, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import type { TrajectoryRecord } from './types';
import { validateTrajectory } from './validate';
import { TrajectoryFormatError } from './errors';

export interface WriterOptions {
  /** Append to an existing file (default) or start it afresh. */
  append?: boolean;
  /** fsync after every record, for power-loss durability (slower; a killed process loses nothing without it). */
  fsync?: boolean;
}

export class TrajectoryWriter {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;
  private written = 0;

  private constructor(
    readonly path: string,
    private readonly fh: FileHandle,
    private readonly fsync: boolean,
    /** Bytes of an unfinished last line, left by an earlier killed writer, that were cut off before appending. */
    readonly repairedBytes: number,
  ) {}

  /** Opens (creating) `path`. An unfinished last line from a crash is cut off so the next record starts a new line. */
  static async open(path: string, opts: WriterOptions = {}): Promise<TrajectoryWriter> {
    const fh = await open(path, opts.append === false ? 'w+' : 'a+');
    try {
      const repaired =
        opts.append === false
          ? 0
          : await withFileLock(path, async () => {
              await removeLeftovers(`${path}.lock`);
              return cutUnfinishedLine(fh, path);
            });
      return new TrajectoryWriter(path, fh, opts.fsync === true, repaired);
    } catch (err) {
      await fh.close();
      throw err;
    }
  }

  /** Records written by this writer. */
  get count(): number {
    return this.written;
  }

  /** Validates and appends one record; concurrent calls are written one after another, whole. */
  write(record: TrajectoryRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`the trajectory writer for ${this.path} is closed`));
    const problem = validateTrajectory(record);
    if (problem) return Promise.reject(TrajectoryFormatError.fromProblem(problem, null, null));
    let line: string;
    try {
      line = JSON.stringify(record) + '\n';
    } catch (err) {
      return Promise.reject(
        new Error(`the trajectory record ${record.id} cannot be written as JSON: ${(err as Error).message}`),
      );
    }
    const next = this.chain.then(() =>
      withFileLock(this.path, async () => {
        // Under the lock nobody else is mid-line, so an unfinished last line is a dead writer's: cut it, then append.
        await cutUnfinishedLine(this.fh, this.path);
        await writeAll(this.fh, Buffer.from(line, 'utf8'));
        if (this.fsync) await this.fh.sync();
        this.written++;
      }),
    );
    this.chain = next.catch(() => {}); // one failed write must not block the ones after it
    return next;
  }

  /** Waits for pending writes and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.chain;
    await this.fh.close();
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

/**
 * Makes the file end with a newline before appending. A complete last record without its newline gets one; an
 * unfinished record (a killed writer) is cut off. Returns the bytes removed. Anything else at the end is not ours
 * to cut, so it is refused.
 */
async function cutUnfinishedLine(fh: FileHandle, path: string): Promise<number> {
  const { size } = await fh.stat();
  if (size === 0) return 0;
  const last = Buffer.alloc(1);
  await fh.read(last, 0, 1, size - 1);
  if (last[0] === 0x0a) return 0;
  const keep = await afterLastNewline(fh, size);
  const tail = Buffer.alloc(size - keep);
  await fh.read(tail, 0, tail.length, keep);
  const text = tail.toString('utf8');
  if (!text.trimStart().startsWith('{')) {
    throw new Error(
      `${path} does not end with a newline and its last line is not a trajectory record; refusing to append to it`,
    );
  }
  try {
    JSON.parse(text);
    await writeAll(fh, Buffer.from('\n'));
    return 0;
  } catch {
    await fh.truncate(keep);
    return size - keep;
  }
}

/** Offset just after the last newline before `size` (0 when there is none). */
async function afterLastNewline(fh: FileHandle, size: number): Promise<number> {
  const block = 64 * 1024;
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - block);
    const buf = Buffer.alloc(end - start);
    await fh.read(buf, 0, buf.length, start);
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    end = start;
  }
  return 0;
}

/** How long a writer waits for another live writer's lock before giving up with a clear error. */
const LOCK_WAIT_MS = 60_000;
/** A lock file without a pid in it is stale after this long (a pid-carrying lock is judged by its pid instead). */
const UNREADABLE_LOCK_MS = 5_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the private pid files (`<lock>.<pid>.<random>`) that killed writers left beside `lock`; live writers' stay.
 */
async function removeLeftovers(lock: string): Promise<void> {
  const prefix = `${basename(lock)}.`;
  const names = await readdir(dirname(lock)).catch(() => [] as string[]);
  const dead = names.filter((n) => {
    if (!n.startsWith(prefix)) return false;
    const pid = Number(n.slice(prefix.length).split('.')[0]);
    return pid > 0 && pid !== process.pid && !processAlive(pid);
  });
  await Promise.all(dead.map((n) => unlink(join(dirname(lock), n)).catch(() => {})));
}

/**
 * Runs `f` holding `<path>.lock`. The lock appears whole or not at all: the pid is written to a private file first and
 * then hard-linked to the lock name (link fails if the lock exists), so a writer killed at any instant never leaves an
 * empty lock. A lock whose pid is dead is taken over; so is an unreadable one older than a few seconds (written by an
 * older Quarry or another tool).
 */
export async function withFileLock<T>(path: string, f: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  const mine = `${lock}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  await writeFile(mine, String(process.pid));
  try {
    for (;;) {
      try {
        await link(mine, lock);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = Number((await readFile(lock, 'utf8').catch(() => '')).trim());
      if (holder > 0 && holder !== process.pid && !processAlive(holder)) {
        await unlink(lock).catch(() => {});
        continue;
      }
      if (!(holder > 0)) {
        const age = await stat(lock).then(
          (s) => Date.now() - s.mtimeMs,
          () => 0,
        );
        if (age > UNREADABLE_LOCK_MS) {
          await unlink(lock).catch(() => {});
          continue;
        }
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${path} stayed locked by another writer (${lock}, pid ${holder || 'unknown'}) for ${LOCK_WAIT_MS / 1000} s`,
        );
      }
      await new Promise((r) => setTimeout(r, 2 + Math.random() * 8));
    }
  } finally {
    await unlink(mine).catch(() => {});
  }
  try {
    return await f();
  } finally {
    await unlink(lock).catch(() => {});
  }
}
