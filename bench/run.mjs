// npm run bench [-- name ...]: runs dist/bench/<name>.js one after another (never in parallel: they measure time),
// each writing bench/results/<name>.json; then gathers them into bench/results/latest.json.
import { readdirSync, readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const distBench = join(root, 'dist', 'bench');
const resultsDir = join(root, 'bench', 'results');
mkdirSync(resultsDir, { recursive: true });

const all = existsSync(distBench)
  ? readdirSync(distBench)
      .filter((f) => f.endsWith('.js'))
      .map((f) => f.slice(0, -3))
  : [];
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length ? wanted : all;
const env = {
  ...process.env,
  QUARRY_BENCH_RESULTS: resultsDir,
  QUARRY_ROOT: root,
  SPIDER_DIR: process.env.SPIDER_DIR ?? resolve(root, '..', 'shared', 'data', 'spider-train'),
};

let failed = 0;
for (const name of names) {
  if (!all.includes(name)) {
    console.error(`bench: no benchmark named ${name} (have: ${all.join(', ')})`);
    failed++;
    continue;
  }
  console.log(`\n== bench ${name}`);
  const r = spawnSync(process.execPath, [join(distBench, `${name}.js`)], { stdio: 'inherit', env, cwd: root });
  if (r.status !== 0) {
    console.error(`bench ${name} failed (exit ${r.status})`);
    failed++;
  }
}

const merged = {};
for (const f of readdirSync(resultsDir).filter((f) => f.endsWith('.json') && f !== 'latest.json')) {
  merged[f.slice(0, -5)] = JSON.parse(readFileSync(join(resultsDir, f), 'utf8'));
}
writeFileSync(join(resultsDir, 'latest.json'), JSON.stringify(merged, null, 2) + '\n');
console.log(`\nresults: ${join('bench', 'results', 'latest.json')}`);
process.exitCode = failed ? 1 : 0;
