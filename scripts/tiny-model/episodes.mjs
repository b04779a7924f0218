// Bundles episodes.ts (which uses the project's own protocol, schema and SQL modules) and runs it with this Node.
//   node_modules/.bin/node scripts/tiny-model/episodes.mjs --out FILE
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'quarry-episodes-'));
try {
  const outfile = join(dir, 'episodes.cjs');
  await build({
    entryPoints: [join(here, 'episodes.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    external: ['better-sqlite3'],
    nodePaths: [join(root, 'node_modules')],
    logLevel: 'warning',
  });
  const r = spawnSync(process.execPath, [outfile, '--root', root, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, NODE_PATH: join(root, 'node_modules') },
  });
  process.exitCode = r.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
