// One writer at a time in a job folder's pulled files. Several pulls of one job can overlap: the editor's monitor and
// an open job panel, or the editor and a `quarry jobs` command in another process. Each asks the target from the
// offsets it read, so without care two of them append the same bytes. A pull therefore writes only under this lock (a
// lock file made with O_EXCL, so other processes respect it too), and re-reads the offsets under it before appending:
// what another pull already wrote is not written again. The section under the lock is short and synchronous. The same
// kind of lock, on its own file, guards job.json's read-change-write (store.ts).
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

const LOCK_FILE = 'pull.lock';
/** A lock older than this was left by a process that died mid-write. */
const STALE_MS = 30_000;
const WAIT_MS = 10_000;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `write` holding the job folder's pull lock; throws when the lock stays taken for 10 s. */
export function underPullLock<T>(jobDir: string, write: () => T): T {
  return underFolderLock(jobDir, LOCK_FILE, 'another pull is writing', write);
}

/** Runs `write` holding the lock file `name` in `dir` (O_EXCL, so other processes respect it too). */
export function underFolderLock<T>(dir: string, name: string, holder: string, write: () => T): T {
  const file = join(dir, name);
  const deadline = Date.now() + WAIT_MS;
  let fd: number | null = null;
  while (fd === null) {
    try {
      fd = openSync(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(file).mtimeMs > STALE_MS) rmSync(file, { force: true });
      } catch {
        /* released meanwhile */
      }
      if (Date.now() > deadline) throw new Error(`${file} stays taken: ${holder}`);
      sleepSync(5);
    }
  }
  try {
    writeSync(fd, `${process.pid}\n`);
    return write();
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
}
