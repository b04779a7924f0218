// The Quarry checkout this CLI runs from, if it runs from one (dist/cli.js inside a clone): its trainer/ package and
// `npm run setup:python` are then what `quarry doctor` suggests. Installed elsewhere, there is none.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function repoRootOf(start: string): string | undefined {
  let dir = start;
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && existsSync(join(dir, 'trainer', 'pyproject.toml'))) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'quarry') return dir;
      } catch {
        /* not ours */
      }
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}
