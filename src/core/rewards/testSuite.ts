// A test suite standing in for one database in the reward panels' execution terms: TSDIR (from the command line or
// the editor's settings, never from a panel file or a request) holds TSDIR/<db_id>/*.sqlite, the layout
// `quarry testsuite build` writes. A lookup is confined to TSDIR/<db_id>/: the db_id is a plain name (no separator,
// no `..`), the folder's and every file's real path (symlinks followed) must lie inside it, only regular files are
// taken, and at most `maxDatabases` files are read. A folder's listing is remembered until the folder changes; the
// real paths are asked again on every lookup, so a file swapped for a link out is refused at once.
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { inside } from '../util/insideDir';

/** Databases of one db_id read at most (the original and its variants); a folder with more is refused. */
const DEFAULT_MAX_SUITE_DATABASES = 64;

/** How a panel uses a test suite (`"exec": {"testSuite": …}` in a panel file). */
export type PanelSuiteUse = 'require' | 'off' | 'auto';

/** A lookup refused or impossible: the panel requires a suite and there is none, a db_id has no folder, … */
export class SuiteError extends Error {}

/** The databases of one db_id in a suite. */
export interface SuiteDatabases {
  dbId: string;
  /** Real paths, sorted by file name (the original <db_id>.sqlite among them). */
  files: string[];
  /** `<db_id>/<file>` for each file: how results and explanations name them (never the server's folders). */
  names: string[];
}

interface Listing {
  stamp: string;
  names: string[];
}

/** Listings remembered at most; past it they are read again. */
const MAX_LISTINGS = 4096;

const realPath = process.platform === 'win32' ? realpathSync : realpathSync.native;

/** A file of a suite folder that is a database (not SQLite's -wal, -shm or -journal beside one). */
function isDatabaseName(name: string): boolean {
  return name.includes('.sqlite') && !/-(wal|shm|journal)$/.test(name);
}

export class TestSuite {
  /** The suite folder's real path. */
  readonly root: string;
  readonly maxDatabases: number;
  private readonly listings = new Map<string, Listing>();

  constructor(dir: string, opts: { maxDatabases?: number } = {}) {
    let real: string;
    try {
      real = realPath(dir);
    } catch {
      throw new SuiteError(`test suite ${dir} does not exist`);
    }
    if (!statSync(real).isDirectory()) throw new SuiteError(`test suite ${dir} is not a directory`);
    this.root = real;
    this.maxDatabases = opts.maxDatabases ?? DEFAULT_MAX_SUITE_DATABASES;
  }

  /**
   * The databases of `dbId`, or null when the suite has no folder for it. Throws SuiteError for a db_id that is not
   * a plain name, a folder or file that leads out of TSDIR/<db_id>/, or a folder holding more than maxDatabases.
   */
  databases(dbId: string): SuiteDatabases | null {
    if (!isPlainName(dbId)) throw new SuiteError(`${JSON.stringify(dbId)} cannot name a folder of a test suite`);
    const lexical = join(this.root, dbId);
    let dir: string;
    try {
      dir = realPath(lexical);
    } catch {
      return null;
    }
    if (!inside(this.root, dir)) throw new SuiteError(`the test suite's folder for '${dbId}' leads out of the suite`);
    const st = statSync(dir);
    if (!st.isDirectory()) return null;
    const names = this.list(dbId, dir, `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`);
    if (names.length > this.maxDatabases) {
      throw new SuiteError(
        `the test suite's folder for '${dbId}' holds ${names.length} databases; at most ${this.maxDatabases} are read`,
      );
    }
    const files: string[] = [];
    for (const n of names) {
      let real: string;
      try {
        real = realPath(join(dir, n));
      } catch {
        continue; // gone since the listing, or a dangling link
      }
      if (!inside(dir, real))
        throw new SuiteError(`test-suite database ${dbId}/${n} leads out of the suite's folder for '${dbId}'`);
      if (!statSync(real).isFile()) continue;
      files.push(real);
    }
    if (files.length === 0) return null;
    return { dbId, files, names: files.map((f) => `${dbId}/${basename(f)}`) };
  }

  private list(dbId: string, dir: string, stamp: string): string[] {
    const known = this.listings.get(dbId);
    if (known && known.stamp === stamp) return known.names;
    const names = readdirSync(dir).filter(isDatabaseName).sort();
    if (this.listings.size >= MAX_LISTINGS) this.listings.clear();
    this.listings.set(dbId, { stamp, names });
    return names;
  }
}

/** A db_id that can only name a folder directly inside the suite. */
function isPlainName(id: string): boolean {
  return (
    typeof id === 'string' &&
    id.length > 0 &&
    id.length <= 255 &&
    id !== '.' &&
    id !== '..' &&
    !/[/\\\0]/.test(id) &&
    !/^[A-Za-z]:/.test(id)
  );
}

/** The db_id of a database file: its name without the extension (Spider's <db_id>/<db_id>.sqlite). */
export function dbIdOfPath(path: string): string {
  return basename(path).replace(/\.(sqlite3?|db)$/i, '');
}

/**
 * The suite databases a panel's execution terms check an item on, or undefined for its own database only. A panel
 * that requires a suite (`"exec": {"testSuite": true}`) is refused when none was given or the item's database has no
 * folder in it; a panel that says nothing uses the suite where it has the database; `false` never uses one.
 */
export function suiteForItem(
  use: PanelSuiteUse,
  panelName: string,
  suite: TestSuite | null | undefined,
  dbId: string,
): SuiteDatabases | undefined {
  if (use === 'off') return undefined;
  if (!suite) {
    if (use === 'require')
      throw new SuiteError(
        `panel '${panelName}' requires a test suite ("exec": {"testSuite": true}) and none was given ` +
          '(start the command with --test-suite TSDIR)',
      );
    return undefined;
  }
  const dbs = suite.databases(dbId);
  if (!dbs && use === 'require')
    throw new SuiteError(
      `panel '${panelName}' requires a test suite and the suite has no folder for database '${dbId}' ` +
        `(expected <TSDIR>/${dbId}/${dbId}.sqlite and its variants; build them with quarry testsuite build)`,
    );
  return dbs ?? undefined;
}
