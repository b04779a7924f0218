// The databases `quarry mcp` serves: the SQLite files under one folder (the workspace it was started in, or
// --db-dir), each named by an id — its path relative to the folder, or a Spider-style db_id (`X` for `X/X.sqlite` or
// `X.sqlite`) — never by an absolute path. Resolution is the environment service's DatabaseRoots (the real path,
// symlinks followed, must lie inside the folder), plus two rules of its own: an absolute path is refused (a client
// names an id), and so is any id with a hidden segment (`..`, `.quarry`, `.git`). Listing walks the folder as the
// editor's Databases view finds files (*.sqlite, *.sqlite3, *.db with the SQLite header; node_modules and hidden
// folders left out), bounded in depth and files visited, without following a linked folder.
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { assertSqliteFile } from '../../core/db/open';
import { DatabaseRoots, inside } from '../envService/databases';
import { ServiceError } from '../envService/errors';

const DATABASE_FILE = /\.(sqlite3?|db)$/i;
/** Folders below the root a listing descends. */
const MAX_LIST_DEPTH = 6;
/** Directory entries a listing looks at before it stops (and says so). */
const MAX_LIST_ENTRIES = 20_000;
/** Databases listed at most. */
const MAX_LISTED = 500;

interface ListedDatabase {
  /** What a tool call names it by. */
  id: string;
  /** Size of the file in bytes. */
  bytes: number;
}

interface DatabaseListing {
  databases: ListedDatabase[];
  /** True when the walk stopped at one of its bounds before seeing every file. */
  incomplete: boolean;
}

export class ServedDatabases {
  readonly root: string;
  private readonly roots: DatabaseRoots;

  constructor(dir: string) {
    this.roots = new DatabaseRoots([dir]);
    this.root = this.roots.list[0];
  }

  /** The absolute real path of the database `id` names, or a ServiceError a client can read. */
  resolve(id: string): string {
    if (isAbsolute(id) || /^[a-z]:/i.test(id))
      throw new ServiceError('outside-roots', 'name a database by its id (as list_databases gives it), not by a path');
    if (id.split(/[\\/]/).some((s) => s.startsWith('.')))
      throw new ServiceError('outside-roots', `${JSON.stringify(id)} is not a database this server serves`);
    try {
      return this.roots.resolve(id).path;
    } catch (err) {
      if (err instanceof ServiceError)
        throw new ServiceError(err.kind, err.message.replaceAll("this server's --db-dir folders", 'the served folder'));
      throw err;
    }
  }

  /** The SQLite files under the root, by id, sorted. */
  list(): DatabaseListing {
    const found: ListedDatabase[] = [];
    let seen = 0;
    let incomplete = false;
    const walk = (dir: string, depth: number) => {
      let names: string[];
      try {
        names = readdirSync(dir).sort();
      } catch {
        return;
      }
      for (const name of names) {
        if (++seen > MAX_LIST_ENTRIES || found.length >= MAX_LISTED) {
          incomplete = true;
          return;
        }
        if (name.startsWith('.') || name === 'node_modules') continue;
        const path = join(dir, name);
        let st;
        try {
          st = lstatSync(path);
        } catch {
          continue;
        }
        if (st.isDirectory()) {
          if (depth < MAX_LIST_DEPTH) walk(path, depth + 1);
          else incomplete = true;
          continue;
        }
        if (!DATABASE_FILE.test(name) || !(st.isFile() || st.isSymbolicLink())) continue;
        const db = this.listed(path);
        if (db) found.push(db);
        if (incomplete) return;
      }
    };
    walk(this.root, 0);
    return { databases: found.sort((a, b) => a.id.localeCompare(b.id)), incomplete };
  }

  /** A file found by the walk as a listed database: a SQLite file whose real path lies inside the root. */
  private listed(path: string): ListedDatabase | null {
    let real: string;
    try {
      real = realpathSync(path);
      assertSqliteFile(real);
    } catch {
      return null;
    }
    if (!inside(this.root, real)) return null;
    const rel = relative(this.root, path).split(sep).join('/');
    return { id: this.shortId(rel, real), bytes: statSync(real).size };
  }

  /** `X` for `X/X.sqlite` or `X.sqlite` when that is what `X` resolves to; the relative path otherwise. */
  private shortId(rel: string, real: string): string {
    const m = /^(?:([^/]+)\/)?([^/]+)\.sqlite$/.exec(rel);
    if (!m || (m[1] !== undefined && m[1] !== m[2])) return rel;
    try {
      return this.roots.resolve(m[2]).path === real ? m[2] : rel;
    } catch {
      return rel;
    }
  }
}
