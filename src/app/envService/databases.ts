// Which databases the environment service may open: only files under its --db-dir roots. A request names a db_id
// (ROOT/<id>/<id>.sqlite, Spider's layout, or ROOT/<id>.sqlite) or a path, relative to a root or absolute; the real
// path (symlinks followed) must lie inside a root, or the request is refused. Messages never name a root.
// Every request asks the file system again (a file may appear, go, or be swapped for a link between two requests);
// only what follows from the name alone (its candidate paths, and which of them lie inside a root) is remembered.
import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import { inside } from '../../core/util/insideDir';
import { ServiceError } from './errors';

interface ResolvedDb {
  path: string;
  id: string | null;
}

/** What a name alone says: where it may be, and whether it names a path (then the answer carries no id). */
interface Candidates {
  within: string[];
  looksLikePath: boolean;
}

/** realpath(3) in one call where it is dependable; Windows keeps Node's own walk (realpath.native trips on some
 *  drives there). Either throws for a missing file or a dangling link. */
const realPath = process.platform === 'win32' ? realpathSync : realpathSync.native;

/** Names remembered at most; past it the memo starts over (any string a client sends is a name). */
const MAX_NAMES = 4096;

export class DatabaseRoots {
  private readonly roots: string[];
  private readonly names = new Map<string, Candidates>();

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
    const { within, looksLikePath } = this.candidates(db);
    // A name that leaves the roots as written is refused before the file system is asked about it, so the answer
    // says nothing about what exists elsewhere on the server.
    if (within.length === 0) throw outside(db);
    for (const c of within) {
      // realpath(3) fails for a missing file or a dangling link, as existsSync is false for them: the next candidate.
      let real: string;
      try {
        real = realPath(c);
      } catch {
        continue;
      }
      if (!this.holds(real)) throw outside(db);
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

  /** The paths `db` may name inside the roots, in the order they are tried: a function of the name alone. */
  private candidates(db: string): Candidates {
    const known = this.names.get(db);
    if (known) return known;
    const looksLikePath = db.includes('/') || db.includes(sep) || /\.(sqlite3?|db)$/i.test(db);
    const all = looksLikePath
      ? isAbsolute(db)
        ? [resolve(db)]
        : this.roots.map((r) => join(r, db))
      : this.roots.flatMap((r) => [join(r, db, `${db}.sqlite`), join(r, `${db}.sqlite`)]);
    const found = { within: all.filter((c) => this.inside(c)), looksLikePath };
    if (this.names.size >= MAX_NAMES) this.names.clear();
    this.names.set(db, found);
    return found;
  }

  /** Whether a real path (realpath's answer: absolute, without links, `.` or `..`) lies inside a root. */
  private holds(real: string): boolean {
    return this.roots.some((r) => (real.startsWith(r) && real[r.length] === sep) || inside(r, real));
  }

  private inside(path: string): boolean {
    return this.roots.some((r) => inside(r, path));
  }
}

function outside(db: string): ServiceError {
  return new ServiceError('outside-roots', `${JSON.stringify(db)} is outside this server's --db-dir folders`);
}

/** Whether `path` lies strictly inside `dir` (both absolute), judged on the names alone. */
export { inside };
