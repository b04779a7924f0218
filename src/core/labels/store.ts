// The label store: one SQLite file (.quarry/labels.sqlite in a workspace) in WAL mode, written by better-sqlite3.
// Every save is one transaction with synchronous=FULL, so once save() returns the label is on disk: a crash or a
// killed editor afterwards cannot lose it. Two processes (two windows, the CLI) may have it open at once; a writer
// that finds it locked waits busy_timeout, then fails with a LabelStoreError of kind 'busy' that says so.
import Database from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { userInfo } from 'node:os';
import { BUILTIN_TAGS, isVerdict, type Label, type LabelInput, type Verdict } from './types';

/** The schema version this code writes (PRAGMA user_version). */
export const LABEL_SCHEMA_VERSION = 1;
const DEFAULT_BUSY_TIMEOUT_MS = 5000;
const MAX_TAG_CHARS = 40;

type LabelStoreErrorKind = 'busy' | 'not-a-store' | 'version' | 'invalid' | 'io';

export class LabelStoreError extends Error {
  constructor(
    readonly kind: LabelStoreErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LabelStoreError';
  }
}

interface LabelStoreOptions {
  /** How long a write waits for another connection's lock before failing (busy_timeout), ms. */
  busyTimeoutMs?: number;
  /** Default labeler for saves that name none. */
  labeler?: string;
}

export interface TagInfo {
  name: string;
  builtin: boolean;
}

interface LabelCounts {
  /** Labels with a verdict. */
  labeled: number;
  byVerdict: Record<Verdict, number>;
}

const SCHEMA_V1 = `
CREATE TABLE labels (
  trajectory_id TEXT PRIMARY KEY,
  file TEXT NOT NULL,
  record_sha TEXT NOT NULL,
  verdict TEXT CHECK (verdict IS NULL OR verdict IN ('correct', 'incorrect', 'unsure')),
  corrected_sql TEXT,
  note TEXT NOT NULL DEFAULT '',
  labeler TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE tags (
  name TEXT PRIMARY KEY,
  builtin INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL
);
CREATE TABLE label_tags (
  trajectory_id TEXT NOT NULL REFERENCES labels(trajectory_id) ON DELETE CASCADE,
  tag TEXT NOT NULL REFERENCES tags(name),
  PRIMARY KEY (trajectory_id, tag)
);
CREATE INDEX label_tags_by_tag ON label_tags(tag);
`;

interface LabelRow {
  trajectory_id: string;
  file: string;
  record_sha: string;
  verdict: string | null;
  corrected_sql: string | null;
  note: string;
  labeler: string;
  updated_at: string;
}

function defaultLabeler(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * A tag as stored: trimmed, inner whitespace collapsed, lower case; throws LabelStoreError('invalid') when unusable.
 */
function normalizeTag(name: string): string {
  const t = name.trim().replace(/\s+/g, ' ').toLowerCase();
  if (t === '') throw new LabelStoreError('invalid', 'a tag cannot be empty');
  if (t.length > MAX_TAG_CHARS)
    throw new LabelStoreError('invalid', `the tag "${t.slice(0, 20)}…" is longer than ${MAX_TAG_CHARS} characters`);
  return t;
}

/** Turns better-sqlite3's errors into ones that say what happened to the label store. */
function explain(err: unknown, path: string, busyTimeoutMs: number): Error {
  if (err instanceof LabelStoreError) return err;
  const code = (err as { code?: unknown }).code;
  const msg = (err as Error).message ?? String(err);
  if (
    code === 'SQLITE_BUSY' ||
    code === 'SQLITE_LOCKED' ||
    (typeof code === 'string' && code.startsWith('SQLITE_BUSY'))
  ) {
    return new LabelStoreError(
      'busy',
      `the label store ${path} is locked by another process (waited ${busyTimeoutMs} ms); try again, or ` +
        `close the other Quarry window or command using it`,
      { cause: err },
    );
  }
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new LabelStoreError(
      'not-a-store',
      `${path} is not a Quarry label store (not a readable SQLite database: ${msg})`,
      { cause: err },
    );
  }
  if (
    typeof code === 'string' &&
    (code.startsWith('SQLITE_CANTOPEN') ||
      code.startsWith('SQLITE_IOERR') ||
      code.startsWith('SQLITE_READONLY') ||
      code === 'SQLITE_FULL')
  ) {
    return new LabelStoreError('io', `cannot write the label store ${path}: ${msg}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(msg);
}

export class LabelStore {
  private readonly db: Database.Database;
  private readonly busyTimeoutMs: number;
  private readonly labeler: string;
  private closed = false;

  private constructor(
    readonly path: string,
    db: Database.Database,
    opts: LabelStoreOptions,
  ) {
    this.db = db;
    this.busyTimeoutMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    this.labeler = opts.labeler ?? defaultLabeler();
  }

  /** Opens (creating it and its folder if needed) the store at `path`. */
  static open(path: string, opts: LabelStoreOptions = {}): LabelStore {
    const busy = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    let db: Database.Database;
    try {
      mkdirSync(dirname(path), { recursive: true });
      db = new Database(path, { timeout: busy });
    } catch (err) {
      throw explain(err, path, busy);
    }
    try {
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busy))}`);
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal')
        throw new LabelStoreError('io', `${path}: could not switch to WAL mode (journal_mode is ${String(mode)})`);
      // FULL: the WAL is synced at every commit, so a save() that returned survives power loss as well as a crash.
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = ON');
      const store = new LabelStore(path, db, opts);
      store.migrate();
      return store;
    } catch (err) {
      db.close();
      throw explain(err, path, busy);
    }
  }

  /**
   * Opens an existing store for reading only: nothing is created, migrated or switched to WAL, so a file that is
   * not a label store (a user's database, an empty file) is refused before anything about it changes.
   */
  static openReadOnly(path: string, opts: LabelStoreOptions = {}): LabelStore {
    const busy = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    let size: number;
    try {
      size = statSync(path).size;
    } catch (err) {
      throw new LabelStoreError(
        'io',
        `${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
      );
    }
    if (size === 0) throw new LabelStoreError('not-a-store', `${path} is an empty file, not a Quarry label store`);
    let db: Database.Database;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout: busy });
    } catch (err) {
      throw explain(err, path, busy);
    }
    try {
      const version = db.pragma('user_version', { simple: true }) as number;
      const hasLabels =
        db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'labels'").get() !== undefined;
      if (version === 0 || !hasLabels) {
        throw new LabelStoreError(
          'not-a-store',
          `${path} is a SQLite database but not a Quarry label store (no label schema)`,
        );
      }
      if (version > LABEL_SCHEMA_VERSION) {
        throw new LabelStoreError(
          'version',
          `${path} was written by a newer Quarry (label schema ${version}; this one reads up ` +
            `to ${LABEL_SCHEMA_VERSION})`,
        );
      }
      return new LabelStore(path, db, opts);
    } catch (err) {
      db.close();
      throw explain(err, path, busy);
    }
  }

  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version > LABEL_SCHEMA_VERSION) {
      throw new LabelStoreError(
        'version',
        `${this.path} was written by a newer Quarry (label schema ${version}; this one reads up ` +
          `to ${LABEL_SCHEMA_VERSION})`,
      );
    }
    if (version === LABEL_SCHEMA_VERSION) return;
    // Created in one IMMEDIATE transaction, so two windows opening a new store at once cannot both create it.
    this.db
      .transaction(() => {
        const again = this.db.pragma('user_version', { simple: true }) as number;
        if (again === LABEL_SCHEMA_VERSION) return;
        const existing = this.db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'table'").get() as {
          n: number;
        };
        if (existing.n > 0)
          throw new LabelStoreError(
            'not-a-store',
            `${this.path} is a SQLite database but not a Quarry label store (it has tables and no label ` +
              `schema version)`,
          );
        this.db.exec(SCHEMA_V1);
        const now = new Date().toISOString();
        const add = this.db.prepare('INSERT INTO tags (name, builtin, created_at) VALUES (?, 1, ?)');
        for (const t of BUILTIN_TAGS) add.run(t, now);
        this.db.pragma(`user_version = ${LABEL_SCHEMA_VERSION}`);
      })
      .immediate();
  }

  private guard<T>(f: () => T): T {
    if (this.closed) throw new LabelStoreError('io', `the label store ${this.path} is closed`);
    try {
      return f();
    } catch (err) {
      throw explain(err, this.path, this.busyTimeoutMs);
    }
  }

  /**
   * Saves (inserts or replaces) one label and its tags in one transaction; unknown tags are added to the tags table.
   * Returns the label as stored. When this returns, the label is committed to disk.
   */
  save(input: LabelInput): Label {
    if (typeof input.trajectoryId !== 'string' || input.trajectoryId === '')
      throw new LabelStoreError('invalid', 'a label needs a trajectory id');
    if (input.verdict !== null && !isVerdict(input.verdict))
      throw new LabelStoreError(
        'invalid',
        `unknown verdict ${JSON.stringify(input.verdict)} (expected correct, incorrect or unsure)`,
      );
    const tags = [...new Set(input.tags.map(normalizeTag))].sort();
    const corrected = input.correctedSql !== null && input.correctedSql.trim() !== '' ? input.correctedSql : null;
    const label: Label = {
      trajectoryId: input.trajectoryId,
      file: input.file,
      recordSha: input.recordSha,
      verdict: input.verdict,
      correctedSql: corrected,
      tags,
      note: input.note ?? '',
      labeler: input.labeler ?? this.labeler,
      updatedAt: new Date().toISOString(),
    };
    return this.guard(() => {
      this.db
        .transaction(() => {
          this.db
            .prepare(
              `INSERT INTO labels (trajectory_id, file, record_sha, verdict, corrected_sql, ` +
                `note, labeler, updated_at)
          VALUES (@trajectoryId, @file, @recordSha, @verdict, @correctedSql, @note, @labeler, @updatedAt)
          ON CONFLICT (trajectory_id) DO UPDATE SET file = excluded.file, record_sha = excluded.record_sha, ` +
                `verdict = excluded.verdict,
            corrected_sql = excluded.corrected_sql, note = excluded.note, ` +
                `labeler = excluded.labeler, updated_at = excluded.updated_at`,
            )
            .run({
              trajectoryId: label.trajectoryId,
              file: label.file,
              recordSha: label.recordSha,
              verdict: label.verdict,
              correctedSql: label.correctedSql,
              note: label.note,
              labeler: label.labeler,
              updatedAt: label.updatedAt,
            });
          this.db.prepare('DELETE FROM label_tags WHERE trajectory_id = ?').run(label.trajectoryId);
          const addTag = this.db.prepare(
            'INSERT INTO tags (name, builtin, created_at) VALUES (?, 0, ?) ON CONFLICT (name) DO NOTHING',
          );
          const link = this.db.prepare('INSERT INTO label_tags (trajectory_id, tag) VALUES (?, ?)');
          for (const t of tags) {
            addTag.run(t, label.updatedAt);
            link.run(label.trajectoryId, t);
          }
        })
        .immediate();
      return label;
    });
  }

  get(trajectoryId: string): Label | null {
    return this.getMany([trajectoryId]).get(trajectoryId) ?? null;
  }

  /** Labels of these trajectories (those that have one). */
  getMany(ids: readonly string[]): Map<string, Label> {
    return this.guard(() => {
      const out = new Map<string, Label>();
      const byId = this.db.prepare('SELECT * FROM labels WHERE trajectory_id = ?');
      const tagsOf = this.db.prepare('SELECT tag FROM label_tags WHERE trajectory_id = ? ORDER BY tag').pluck();
      // One read transaction: a concurrent writer cannot make the labels and their tags disagree.
      this.db
        .transaction(() => {
          for (const id of ids) {
            if (out.has(id)) continue;
            const row = byId.get(id) as LabelRow | undefined;
            if (row) out.set(id, this.toLabel(row, tagsOf.all(id) as string[]));
          }
        })
        .deferred();
      return out;
    });
  }

  /** Every label, oldest save first. */
  all(): Label[] {
    return this.guard(() =>
      this.db
        .transaction(() => {
          const rows = this.db.prepare('SELECT * FROM labels ORDER BY updated_at, trajectory_id').all() as LabelRow[];
          const tagRows = this.db.prepare('SELECT trajectory_id, tag FROM label_tags ORDER BY tag').all() as {
            trajectory_id: string;
            tag: string;
          }[];
          const tags = new Map<string, string[]>();
          for (const t of tagRows) {
            const l = tags.get(t.trajectory_id);
            if (l) l.push(t.tag);
            else tags.set(t.trajectory_id, [t.tag]);
          }
          return rows.map((r) => this.toLabel(r, tags.get(r.trajectory_id) ?? []));
        })
        .deferred(),
    );
  }

  /** Removes a trajectory's label (and its tag links); true when there was one. */
  delete(trajectoryId: string): boolean {
    return this.guard(() =>
      this.db
        .transaction(() => this.db.prepare('DELETE FROM labels WHERE trajectory_id = ?').run(trajectoryId).changes > 0)
        .immediate(),
    );
  }

  counts(ids?: readonly string[]): LabelCounts {
    const labels = ids ? [...this.getMany(ids).values()] : this.all();
    const byVerdict: Record<Verdict, number> = { correct: 0, incorrect: 0, unsure: 0 };
    for (const l of labels) if (l.verdict) byVerdict[l.verdict]++;
    return { labeled: byVerdict.correct + byVerdict.incorrect + byVerdict.unsure, byVerdict };
  }

  /** Built-in tags first (in their fixed order), then the reviewers' own, alphabetically. */
  tags(): TagInfo[] {
    return this.guard(() => {
      const rows = this.db.prepare('SELECT name, builtin FROM tags').all() as { name: string; builtin: number }[];
      const builtinOrder = new Map(BUILTIN_TAGS.map((t, i) => [t, i]));
      return rows
        .map((r) => ({ name: r.name, builtin: r.builtin === 1 }))
        .sort((a, b) =>
          a.builtin === b.builtin
            ? a.builtin
              ? (builtinOrder.get(a.name) ?? 0) - (builtinOrder.get(b.name) ?? 0)
              : a.name.localeCompare(b.name)
            : a.builtin
              ? -1
              : 1,
        );
    });
  }

  /** Adds a reviewer's tag (no-op when it exists); returns the name as stored. */
  addTag(name: string): string {
    const t = normalizeTag(name);
    this.guard(() =>
      this.db
        .prepare('INSERT INTO tags (name, builtin, created_at) VALUES (?, 0, ?) ON CONFLICT (name) DO NOTHING')
        .run(t, new Date().toISOString()),
    );
    return t;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private toLabel(row: LabelRow, tags: string[]): Label {
    return {
      trajectoryId: row.trajectory_id,
      file: row.file,
      recordSha: row.record_sha,
      verdict: isVerdict(row.verdict) ? row.verdict : null,
      correctedSql: row.corrected_sql,
      tags,
      note: row.note,
      labeler: row.labeler,
      updatedAt: row.updated_at,
    };
  }
}
