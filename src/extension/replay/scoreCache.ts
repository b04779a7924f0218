// Verdicts and rewards computed for a trajectory file, kept across sessions in the extension's global storage (one JSON
// file per file version), so reopening a scored run tomorrow costs no SQL. Each outcome carries the stamp of the
// database it ran on; the scorer drops those whose database changed since.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SavedOutcome } from '../../core/trajectories/scoring';
import { writeJsonAtomicSync } from '../../core/util/atomicWrite';

/** Files kept; the least recently written go first. */
const MAX_FILES = 50;

interface CacheFile {
  version: string;
  saved: SavedOutcome[];
}

export function dbStamp(path: string): string | null {
  try {
    const st = statSync(path);
    return `${st.size}:${st.mtimeMs}`;
  } catch {
    return null;
  }
}

export class ScoreCache {
  constructor(private readonly dir: string) {}

  private fileOf(version: string): string {
    return join(this.dir, createHash('sha256').update(version).digest('hex').slice(0, 32) + '.json');
  }

  /** Saved outcomes of this file version; [] when there are none or the cache file is unreadable. */
  load(version: string): SavedOutcome[] {
    try {
      const data = JSON.parse(readFileSync(this.fileOf(version), 'utf8')) as CacheFile;
      return data.version === version && Array.isArray(data.saved) ? data.saved.filter(isSaved) : [];
    } catch {
      return [];
    }
  }

  /** Writes atomically (temp file + rename): a killed window leaves the old cache or the new one, never half. */
  save(version: string, saved: SavedOutcome[]): void {
    writeJsonAtomicSync(this.fileOf(version), { version, saved } satisfies CacheFile);
    this.prune();
  }

  private prune(): void {
    const files = readdirSync(this.dir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => ({ f, t: statSync(join(this.dir, f)).mtimeMs }))
      .sort((a, b) => b.t - a.t);
    for (const { f } of files.slice(MAX_FILES)) rmSync(join(this.dir, f), { force: true });
  }
}

function isSaved(v: unknown): v is SavedOutcome {
  if (!v || typeof v !== 'object') return false;
  const s = v as SavedOutcome;
  const o = s.outcome as Partial<SavedOutcome['outcome']> | undefined;
  if (
    typeof s.id !== 'string' ||
    (s.dbStamp !== null && typeof s.dbStamp !== 'string') ||
    !o ||
    typeof o.panel !== 'string'
  )
    return false;
  if (o.status === 'scored')
    return (
      typeof o.correct === 'boolean' &&
      typeof o.reason === 'string' &&
      typeof o.reward === 'number' &&
      Number.isFinite(o.reward)
    );
  return o.status === 'skipped' && typeof o.reason === 'string';
}
