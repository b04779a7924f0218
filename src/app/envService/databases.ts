// Which databases the environment service may open: only files under its --db-dir roots. A request names a db_id
// (ROOT/<id>/<id>.sqlite, Spider's layout, or ROOT/<id>.sqlite) or a path, relative to a root or absolute; the real
// path (symlinks followed) must lie inside a root, or the request is refused. Messages never name a root.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ServiceError } from './errors';

export interface ResolvedDb {
  path: string;
  id: string | null;
}

export class DatabaseRoots {
  private readonly roots: string[];

  constructor(dirs: readonly string[]) {
    if (dirs.length === 0) throw new Error('at least one --db-dir is needed');
    this.roots = dirs.map((d) => {
      if (!existsSync(d) || !statSync(d).isDirectory()) throw new Error(`--db-dir ${d} is not a directory`);
      return realpathSync(d);
    });
  }

  get list(): readonly string[] {
    return this.roots;
  }

  resolve(db: unknown): ResolvedDb {
    if (typeof db !== 'string' || db.trim() === '')
      throw new ServiceError('bad-request', '"db" must be a db_id or a database path');
    if (db.length > 4096 || db.includes('\0')) throw new ServiceError('bad-request', '"db" is not a usable name');
    const looksLikePath = db.includes('/') || db.includes(sep) || /\.(sqlite3?|db)$/i.test(db);
    const candidates = looksLikePath
      ? isAbsolute(db)
        ? [resolve(db)]
        : this.roots.map((r) => join(r, db))
      : this.roots.flatMap((r) => [join(r, db, `${db}.sqlite`), join(r, `${db}.sqlite`)]);
    // A name that leaves the roots as written is refused before the file system is asked about it, so the answer
    // says nothing about what exists elsewhere on the server.
    const within = candidates.filter((c) => this.inside(c));
    if (within.length === 0) throw outside(db);
    for (const c of within) {
      if (!existsSync(c)) continue;
      const real = realpathSync(c);
      if (!this.inside(real)) throw outside(db);
      if (statSync(real).isDirectory())
        throw new ServiceError('bad-request', `${JSON.stringify(db)} is a directory, not a database file`);
      return { path: real, id: looksLikePath ? null : db };
    }
    throw new ServiceError(
      'not-found',
      `no database ${JSON.stringify(db)} in this server's --db-dir folders` +
        (looksLikePath ? '' : ` (looked for ${basename(db)}/${basename(db)}.sqlite and ${basename(db)}.sqlite)`),
    );
  }

  private inside(path: string): boolean {
    return this.roots.some((r) => inside(r, path));
  }
}

function outside(db: string): ServiceError {
  return new ServiceError('outside-roots', `${JSON.stringify(db)} is outside this server's --db-dir folders`);
}

/** Whether `path` lies strictly inside `dir` (both absolute), judged on the names alone. */
export function inside(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}
