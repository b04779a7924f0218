// exec-batch throughput on Spider train gold queries plus exploratory queries, end to end through the CLI,
// side by side with a Python baseline doing what SkyRL-SQL's SQL tool does (bench/python/skyrl_baseline.py).
// QUARRY_BENCH_LIMIT=N limits the gold queries (default: all); exploratory queries are added for their databases.
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir, cpus } from 'node:os';
import { spawnSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { requireSpider, writeResult, repoRoot } from './common';

interface Gold { db_id: string; query: string }

const spider = requireSpider();
const limit = Number(process.env.QUARRY_BENCH_LIMIT ?? Infinity);
const jobs = Number(process.env.QUARRY_BENCH_JOBS ?? cpus().length);
const python = process.env.QUARRY_PYTHON ?? '/usr/bin/python3';

const dbPath = (id: string) => join(spider, 'database', id, `${id}.sqlite`);
const gold = (JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8')) as Gold[])
  .filter((g) => existsSync(dbPath(g.db_id))).slice(0, limit);

// Exploratory queries, the kind an agent issues before answering: every table, its columns, one column's values.
const exploratory: Gold[] = [];
for (const id of [...new Set(gold.map((g) => g.db_id))]) {
  const db = new Database(dbPath(id), { readonly: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
    for (const t of tables) {
      const q = `"${t.replace(/"/g, '""')}"`;
      const first = (db.prepare(`PRAGMA table_info(${q})`).all() as { name: string }[])[0]?.name;
      exploratory.push({ db_id: id, query: `SELECT * FROM ${q}` }, { db_id: id, query: `PRAGMA table_info(${q})` });
      if (first) exploratory.push({ db_id: id, query: `SELECT DISTINCT "${first.replace(/"/g, '""')}" FROM ${q}` });
    }
  } finally {
    db.close();
  }
}

const work = mkdtempSync(join(tmpdir(), 'quarry-bench-env-'));
const inPath = join(work, 'in.jsonl');
const all = [...gold, ...exploratory];
// Paths relative to the input file's directory: both tools resolve them the same way.
writeFileSync(inPath, all.map((g, i) => JSON.stringify({ id: i, db: relative(work, dbPath(g.db_id)), sql: g.query })).join('\n') + '\n');

function timed(cmd: string, args: string[]): { wall: number; stdout: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', cwd: repoRoot, maxBuffer: 64 * 2 ** 20 });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return { wall, stdout: r.stdout };
}

console.log(`env: ${gold.length} gold + ${exploratory.length} exploratory queries, ${jobs} jobs`);
const quarry = timed(process.execPath, [join(repoRoot, 'dist', 'cli.js'), 'exec-batch', '--in', inPath, '--out', join(work, 'quarry.jsonl'), '--jobs', String(jobs)]);
const qLines = readFileSync(join(work, 'quarry.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { ok: boolean; errorClass: string | null });
const quarryQps = all.length / quarry.wall;
console.log(`quarry: ${quarry.stdout.trim()} | end to end ${quarry.wall.toFixed(2)} s, ${quarryQps.toFixed(1)} q/s`);

let baseline: Record<string, unknown> | null = null;
let baselineQps: number | null = null;
const hasPandas = spawnSync(python, ['-c', 'import pandas'], { encoding: 'utf8' }).status === 0;
if (hasPandas) {
  const py = timed(python, [join(repoRoot, 'bench', 'python', 'skyrl_baseline.py'), inPath, join(work, 'python.jsonl'), '--workers', String(jobs)]);
  baseline = JSON.parse(py.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  baselineQps = all.length / py.wall;
  console.log(`python baseline: ${JSON.stringify(baseline)} | end to end ${py.wall.toFixed(2)} s, ${baselineQps.toFixed(1)} q/s`);
} else {
  console.log(`python baseline skipped: ${python} cannot import pandas`);
}
rmSync(work, { recursive: true, force: true });

const ratio = baselineQps ? quarryQps / baselineQps : null;
if (ratio) console.log(`ratio quarry / python: ${ratio.toFixed(2)}x (target >= 3x)`);
writeResult('env', {
  queries: all.length, gold: gold.length, exploratory: exploratory.length, jobs,
  quarry: { wallSeconds: quarry.wall, qps: quarryQps, errors: qLines.filter((l) => !l.ok).length,
    timeouts: qLines.filter((l) => l.errorClass === 'timeout').length, summary: quarry.stdout.trim() },
  python: baseline ? { ...baseline, endToEndQps: baselineQps } : null,
  ratio, target: '>= 3x',
  notes: 'Both measured end to end (process start to exit) on the same JSONL input; the baseline follows SkyRL-SQL: a connection per call, BEGIN/execute/fetchall/rollback, pandas to_string, 9,000-character cap.',
});
