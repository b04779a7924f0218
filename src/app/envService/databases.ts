// Which databases the environment service may open: only files under its --db-dir roots. A request names a db_id
// (ROOT/<id>/<id>.sqlite, Spider's layout, or ROOT/<id>.sqlite) or a path, relative to a root or absolute; the real
// path (symlinks followed) must lie inside a root, or the request is refused.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, relative, sep } from 'node:path';
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
    const looksLikePath = db.includes('/') || db.includes(sep) || /\.(sqlite3?|db)$/i.test(db);
    const candidates = looksLikePath
      ? isAbsolute(db)
        ? [db]
        : this.roots.map((r) => join(r, db))
      : this.roots.flatMap((r) => [join(r, db, `${db}.sqlite`), join(r, `${db}.sqlite`)]);
    for (const c of candidates) {
      if (!existsSync(c)) continue;
      const real = realpathSync(c);
      if (!this.inside(real))
        throw new ServiceError('outside-roots', `${db} is outside the database roots (${this.roots.join(', ')})`);
      if (statSync(real).isDirectory())
        throw new ServiceError('bad-request', `${db} is a directory, not a database file`);
      return { path: real, id: looksLikePath ? null : db };
    }
    if (looksLikePath && isAbsolute(db) && !this.inside(db)) {
      throw new ServiceError('outside-roots', `${db} is outside the database roots (${this.roots.join(', ')})`);
    }
    throw new ServiceError(
      'not-found',
      `no database ${JSON.stringify(db)} under ${this.roots.join(', ')}` +
        (looksLikePath ? '' : ` (looked for ${basename(db)}/${basename(db)}.sqlite and ${basename(db)}.sqlite)`),
    );
  }

  private inside(path: string): boolean {
    return this.roots.some((r) => {
      const rel = relative(r, path);
      return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
    });
  }
}
