// Keeps recently used read-only handles open so a query costs a prepare and a step, not an open.
import type Database from 'better-sqlite3';
import { realpathSync, statSync } from 'node:fs';
import { openReadOnly } from './open';

interface Entry {
  db: Database.Database;
  stamp: string;
  real: string;
}

/** Size, mtime and identity of a file, or '-' when it does not exist (no exception: most files have no -wal). */
function part(p: string): string {
  try {
    const st = statSync(p, { throwIfNoEntry: false });
    return st ? `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}` : '-';
  } catch {
    return '-';
  }
}

/**
 * Identity, size and mtime of the file (stat follows links, so a link pointed at another file changes the stamp) and
 * of the -wal beside the real file: a file replaced or rewritten, or committed to by another process in WAL mode,
 * since it was opened is reopened rather than read through a stale handle. Two stat calls per statement; the real
 * path is resolved only when the handle is (re)opened.
 */
export function stampOf(path: string, real: string): string {
  return `${part(path)}|${part(real + '-wal')}`;
}

function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // missing: openReadOnly says so with the path the caller gave
  }
}

export class HandleCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly capacity: number,
    private readonly busyTimeoutMs: number,
  ) {}

  get(path: string): Database.Database {
    const hit = this.entries.get(path);
    if (hit) {
      this.entries.delete(path);
      if (hit.stamp === stampOf(path, hit.real)) {
        this.entries.set(path, hit);
        return hit.db;
      }
      hit.db.close();
    }
    const real = realPathOf(path);
    const stamp = stampOf(path, real);
    const db = openReadOnly(path, { busyTimeoutMs: this.busyTimeoutMs });
    this.entries.set(path, { db, stamp, real });
    while (this.entries.size > this.capacity) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.entries.delete(oldest);
      entry.db.close();
    }
    return db;
  }

  closeAll(): void {
    for (const e of this.entries.values()) e.db.close();
    this.entries.clear();
  }
}
