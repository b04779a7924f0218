// Creating the output directory one level at a time. fs.mkdirSync({recursive: true}) spins forever on some paths
// (e.g. under /proc, where mkdir answers ENOENT for a parent that exists), so it is not used for user-given paths.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Makes `dir` and any missing parents; throws an Error that names the path and the reason. */
export function ensureDir(dir: string): void {
  const missing: string[] = [];
  let p = resolve(dir);
  for (;;) {
    let isDir: boolean | null = null;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      // ENOTDIR: some parent is a file; walking up finds it and says so.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new Error(`cannot use ${p}: ${(err as Error).message}`);
    }
    if (isDir === true) break;
    if (isDir === false) throw new Error(`${p} exists and is not a directory`);
    missing.push(p);
    const up = dirname(p);
    if (up === p) break;
    p = up;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(d).isDirectory()) continue;
      throw new Error(`cannot create ${d}: ${(err as Error).message}`);
    }
  }
}
