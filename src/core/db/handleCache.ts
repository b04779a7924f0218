// Keeps recently used read-only handles open so a query costs a prepare and a step, not an open.
import type Database from 'better-sqlite3';
import { realpathSync, statSync } from 'node:fs';
import { openReadOnly } from './open';

interface Entry { db: Database.Database; stamp: string }

/**
 * Size, mtime and inode of the file (through links) and of its -wal: a file replaced or rewritten, or committed to
 * by another process in WAL mode, since it was opened is reopened rather than read through a stale handle.
 */
function stampOf(path: string): string {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return 'gone';
  }
  const part = (p: string): string => {
    try {
      const st = statSync(p);
      return `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {
      return '-';
    }
  };
  return `${real}|${part(real)}|${part(real + '-wal')}`;
}

export class HandleCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly capacity: number, private readonly busyTimeoutMs: number) {}

  get(path: string): Database.Database {
    const stamp = stampOf(path);
    const hit = this.entries.get(path);
    if (hit) {
      this.entries.delete(path);
      if (hit.stamp === stamp) { this.entries.set(path, hit); return hit.db; }
      hit.db.close();
    }
    const db = openReadOnly(path, { busyTimeoutMs: this.busyTimeoutMs });
    this.entries.set(path, { db, stamp });
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
