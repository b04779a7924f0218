// Test databases are built from SQL scripts at test time, so the repository holds no binary fixtures.
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';

/** The repository root, found from wherever the (transpiled) test file runs. */
export const repoRoot: string = (() => {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'test', 'fixtures'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('repository root not found above ' + __dirname);
    dir = up;
  }
  return dir;
})();

export const fixturesDir = join(repoRoot, 'test', 'fixtures');

const made: string[] = [];
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

/** A fresh temporary directory, removed when the test process exits. */
export function tempDir(prefix = 'quarry-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Builds `test/fixtures/<name>.sql` (or the given SQL text) into a new SQLite file and returns its path. */
export function buildDb(name: string, opts: { sql?: string; dir?: string; file?: string } = {}): string {
  const sql = opts.sql ?? readFileSync(join(fixturesDir, `${name}.sql`), 'utf8');
  const dir = opts.dir ?? tempDir();
  const file = resolve(dir, opts.file ?? `${name}.sqlite`);
  const db = new Database(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
  return file;
}
