// Soak: 10,000 mixed statements — accepted (Spider gold), rejected (writes, every EXPLAIN/PRAGMA setting form),
// runaway and oversized — through `quarry exec-batch` and `quarry eval` as users run them, with parents killed at
// random moments. Reports: results that differ from each statement run alone (must be 0), leftover worker processes
// (0), files created or changed beside the databases (0), and the peak memory of the CLI processes.
//   QUARRY_SOAK_N (default 10000) statements; QUARRY_SOAK_ALONE (default 300) checked one process each.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { repoRoot, requireSpider, writeResult } from './common';
import { floatLcg31 } from '../src/core/util/random';

const spider = requireSpider();
const N = Number(process.env.QUARRY_SOAK_N ?? 10_000);
const ALONE = Number(process.env.QUARRY_SOAK_ALONE ?? 300);
const cli = join(repoRoot, 'dist', 'cli.js');
const rand = floatLcg31(7);

interface Gold {
  db_id: string;
  query: string;
}
const golds = JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8')) as Gold[];
const dbIds = [...new Set(golds.map((g) => g.db_id))].slice(0, 25);
const dbPath = (id: string) => join(spider, 'database', id, `${id}.sqlite`);

// The databases' directories: listed and hashed before and after, to prove nothing was created or changed there.
function fingerprint(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of dbIds) {
    const dir = join(spider, 'database', id);
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      out[p] = statSync(p).isFile() ? createHash('sha256').update(readFileSync(p)).digest('hex') : 'dir';
    }
  }
  return out;
}

const REJECTED = [
  'DELETE FROM {t}',
  'INSERT INTO {t} DEFAULT VALUES',
  'DROP TABLE {t}',
  'CREATE TABLE x (a)',
  'VACUUM',
  "ATTACH ':memory:' AS m",
  'PRAGMA query_only = 0',
  'PRAGMA journal_mode = delete',
  'PRAGMA user_version = 5',
  'BEGIN',
  'SELECT 1; DELETE FROM {t}',
  'EXPLAIN PRAGMA case_sensitive_like=1',
  'EXPLAIN PRAGMA query_only=0',
  'EXPLAIN PRAGMA reverse_unordered_selects=1',
  'EXPLAIN PRAGMA full_column_names=1',
  'EXPLAIN PRAGMA short_column_names=0',
  'EXPLAIN PRAGMA locking_mode=EXCLUSIVE',
  'EXPLAIN QUERY PLAN PRAGMA case_sensitive_like=1',
  'EXPLAIN /* c */ PRAGMA case_sensitive_like = 1',
  "SELECT load_extension('x')",
  'CREATE TEMP TABLE t2 (a)',
  'REINDEX',
  'ANALYZE',
];
const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';
const OVERSIZED =
  'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 3000000) SELECT x, ' +
  "printf('%0100d', x) FROM c";
const PROBES = ["SELECT 'a' LIKE 'A'", 'SELECT name FROM sqlite_master ORDER BY rowid LIMIT 3'];

const firstTable = new Map<string, string>();
for (const id of dbIds) {
  const r = spawnSync(
    process.execPath,
    [
      cli,
      'exec',
      '--db',
      dbPath(id),
      '--format',
      'json',
      '--sql',
      "SELECT name FROM sqlite_master WHERE type='table' ORDER BY rowid LIMIT 1",
    ],
    { encoding: 'utf8' },
  );
  firstTable.set(id, (JSON.parse(r.stdout) as { data: { name: string }[] }).data[0]?.name ?? 'x');
}

interface Stmt {
  id: number;
  db: string;
  sql: string;
  kind: string;
}
const goldPool = golds.filter((g) => dbIds.includes(g.db_id));
const stmts: Stmt[] = [];
for (let i = 0; i < N; i++) {
  const r = rand();
  const id = dbIds[Math.floor(rand() * dbIds.length)];
  let kind: string;
  let sql: string;
  if (r < 0.6) {
    const g = goldPool[Math.floor(rand() * goldPool.length)];
    stmts.push({ id: i, db: dbPath(g.db_id), sql: g.query, kind: 'accepted' });
    continue;
  }
  if (r < 0.85) {
    kind = 'rejected';
    sql = REJECTED[Math.floor(rand() * REJECTED.length)].replace('{t}', `"${firstTable.get(id)}"`);
  } else if (r < 0.95) {
    kind = 'probe';
    sql = PROBES[Math.floor(rand() * PROBES.length)];
  } else if (r < 0.97) {
    kind = 'runaway';
    sql = RUNAWAY;
  } else {
    kind = 'oversized';
    sql = OVERSIZED;
  }
  stmts.push({ id: i, db: dbPath(id), sql, kind });
}

const work = mkdtempSync(join(tmpdir(), 'quarry-soak-'));
const before = fingerprint();
const timeoutMs = 1000;
let peakKb = 0;

/** Runs `quarry exec-batch` on `list` (optionally killing it after `killAfterMs`); returns its lines by id. */
async function batch(
  list: Stmt[],
  name: string,
  killAfterMs?: number,
  signal: NodeJS.Signals = 'SIGKILL',
): Promise<Map<number, { ok: boolean; errorClass: string | null; rows: unknown }>> {
  const input = join(work, `${name}.in.jsonl`);
  const output = join(work, `${name}.out.jsonl`);
  rmSync(output, { force: true });
  writeFileSync(input, list.map((s) => JSON.stringify({ id: s.id, db: s.db, sql: s.sql })).join('\n') + '\n');
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      '%M',
      process.execPath,
      cli,
      'exec-batch',
      '--in',
      input,
      '--out',
      output,
      '--jobs',
      '2',
      '--timeout-ms',
      String(timeoutMs),
      '--max-rows',
      '200',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  child.stderr.on('data', (d: Buffer) => {
    err += String(d);
  });
  let timer: NodeJS.Timeout | undefined;
  if (killAfterMs !== undefined) {
    // /usr/bin/time's child is the CLI: signal it, not the wrapper.
    timer = setTimeout(() => {
      const pids = childPids(child.pid!);
      // The CLI's own workers, noted before it is signalled: each must be gone once the CLI is.
      for (const p of pids) killedWorkers.push(...childPids(p));
      for (const p of pids)
        try {
          process.kill(p, signal);
        } catch {
          /* gone */
        }
    }, killAfterMs);
  }
  await new Promise<void>((r) => child.on('exit', () => r()));
  if (timer) clearTimeout(timer);
  const kb = Number(err.trim().split('\n').pop());
  if (Number.isFinite(kb)) peakKb = Math.max(peakKb, kb);
  const out = new Map<number, { ok: boolean; errorClass: string | null; rows: unknown }>();
  if (existsSync(output)) {
    for (const line of readFileSync(output, 'utf8').split('\n')) {
      if (!line) continue;
      const o = JSON.parse(line) as { id: number; ok: boolean; errorClass: string | null; rows: unknown };
      out.set(o.id, { ok: o.ok, errorClass: o.errorClass, rows: o.rows });
    }
  }
  return out;
}

const key = (r: { ok: boolean; errorClass: string | null; rows: unknown }) =>
  JSON.stringify([r.ok, r.errorClass, r.ok ? r.rows : null]);
type Line = { ok: boolean; errorClass: string | null; rows: unknown };
/** A difference where one side ran out of time is the machine's load, not one statement changing another. */
const timingOnly = (a: Line, b: Line) => a.errorClass === 'timeout' || b.errorClass === 'timeout';
const diffs: { where: string; kind: string; sql: string; a: string; b: string }[] = [];
function compare(where: string, s: Stmt, a: Line | undefined, b: Line | undefined): 'same' | 'timing' | 'different' {
  if (!a || !b) return 'same';
  if (key(a) === key(b)) return 'same';
  if (timingOnly(a, b)) return 'timing';
  diffs.push({ where, kind: s.kind, sql: s.sql.slice(0, 120), a: key(a).slice(0, 200), b: key(b).slice(0, 200) });
  return 'different';
}

function childPids(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

/** Worker pids of CLIs the soak killed; any still alive afterwards is a leftover. */
const killedWorkers: number[] = [];
function leftoverWorkers(): number {
  return killedWorkers.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }).length;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  // 1. The whole workload in one batch, then in a shuffled order: a statement's result may not depend on its
  // neighbours.
  const whole = await batch(stmts, 'whole');
  const shuffled = [...stmts].sort(() => rand() - 0.5);
  const again = await batch(shuffled, 'shuffled');
  let orderDiffs = 0;
  let timingDiffs = 0;
  for (const s of stmts) {
    const c = compare('shuffled', s, whole.get(s.id), again.get(s.id));
    if (c === 'different') orderDiffs++;
    else if (c === 'timing') timingDiffs++;
  }
  // 2. A sample run alone, one process per statement (`quarry exec-batch` of one line).
  let aloneDiffs = 0;
  const sample = stmts
    .filter((s) => s.kind !== 'runaway')
    .sort(() => rand() - 0.5)
    .slice(0, ALONE);
  for (const s of sample) {
    const one = await batch([s], 'alone');
    const c = compare('alone', s, one.get(s.id), whole.get(s.id));
    if (c === 'different') aloneDiffs++;
    else if (c === 'timing') timingDiffs++;
  }
  // 3. Parents killed at random moments (KILL, TERM, HUP, INT): no worker may outlive its parent; the lines kept are
  // whole
  //    and equal to the full run's.
  let killedRuns = 0;
  let keptLineDiffs = 0;
  for (const sig of ['SIGKILL', 'SIGTERM', 'SIGHUP', 'SIGINT', 'SIGKILL', 'SIGTERM'] as const) {
    const part = stmts.slice(Math.floor(rand() * (N - 1500)), undefined).slice(0, 1500);
    const got = await batch(part, `killed-${killedRuns}`, 300 + Math.floor(rand() * 3000), sig);
    killedRuns++;
    for (const [id, r] of got) {
      const c = compare(`killed-${killedRuns}`, stmts[id], r, whole.get(id));
      if (c === 'different') keptLineDiffs++;
      else if (c === 'timing') timingDiffs++;
    }
  }
  await new Promise((r) => setTimeout(r, 1500)); // the watcher threads poll twice a second
  const leftovers = leftoverWorkers();
  // 4. quarry eval over the accepted statements as gold-vs-gold, in two orders: the same verdicts item by item.
  const accepted = stmts.filter((s) => s.kind === 'accepted').slice(0, 3000);
  const evalRun = (list: Stmt[], name: string) => {
    const gold = join(work, `${name}.gold.sql`);
    const pred = join(work, `${name}.pred.sql`);
    writeFileSync(
      gold,
      list.map((s) => `${s.sql.replace(/\s+/g, ' ')}\t${s.db.split('/').slice(-2, -1)[0]}`).join('\n') + '\n',
    );
    writeFileSync(
      pred,
      list
        .map((s) => (s.id % 3 === 0 ? 'EXPLAIN PRAGMA case_sensitive_like=1' : s.sql.replace(/\s+/g, ' ')))
        .join('\n') + '\n',
    );
    const out = join(work, `${name}.report.json`);
    const r = spawnSync(
      '/usr/bin/time',
      [
        '-f',
        '%M',
        process.execPath,
        cli,
        'eval',
        '--gold',
        gold,
        '--pred',
        pred,
        '--db-dir',
        join(spider, 'database'),
        '--out',
        out,
      ],
      { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
    );
    const kb = Number(r.stderr.trim().split('\n').pop());
    if (Number.isFinite(kb)) peakKb = Math.max(peakKb, kb);
    return (JSON.parse(readFileSync(out, 'utf8')) as { items: { exec: boolean }[] }).items.map((i) => i.exec);
  };
  const e1 = evalRun(accepted, 'eval-a');
  const reversed = [...accepted].reverse();
  const e2 = evalRun(reversed, 'eval-b').reverse();
  const evalDiffs = e1.filter((v, i) => v !== e2[i]).length;
  const after = fingerprint();
  const changedBeside = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (p) => before[p] !== after[p],
  );
  rmSync(work, { recursive: true, force: true });

  const counts = Object.fromEntries(
    ['accepted', 'rejected', 'probe', 'runaway', 'oversized'].map((k) => [k, stmts.filter((s) => s.kind === k).length]),
  );
  console.log(
    JSON.stringify({
      counts,
      orderDiffs,
      aloneDiffs,
      keptLineDiffs,
      timingDiffs,
      leftovers,
      evalDiffs,
      changedBeside,
      peakKb,
    }),
  );
  for (const d of diffs.slice(0, 10)) console.log(JSON.stringify(d));
  writeResult('soak', {
    statements: N,
    kinds: counts,
    databases: dbIds.length,
    timeoutMs,
    differences: {
      shuffledOrder: orderDiffs,
      aloneSample: aloneDiffs,
      aloneSampleSize: sample.length,
      killedRunLines: keptLineDiffs,
      evalReversedOrder: evalDiffs,
      evalItems: accepted.length,
    },
    timingDependent: timingDiffs,
    firstDifferences: diffs.slice(0, 10),
    killedRuns,
    workersOfKilledRuns: killedWorkers.length,
    leftoverWorkerProcesses: leftovers,
    filesCreatedOrChangedBesideDatabases: changedBeside.length,
    peakMemoryMiB: Math.round(peakKb / 1024),
    seconds: Math.round((performance.now() - t0) / 1000),
    loadAverage1m: loadavg()[0],
    command: 'npm run build && npm run bench -- soak',
    notes:
      'Differences compare ok/errorClass/rows of each statement; one where either side ran past the time limit ' +
      '(a loaded machine) is counted apart as timingDependent. The alone sample runs each statement as a one-line ' +
      'exec-batch in its own process. Killed runs signal the CLI at a random moment; the lines kept must ' +
      'equal the full ' +
      "run's and no worker may outlive its parent. eval scores 3,000 gold-vs-gold items (every third prediction an " +
      'EXPLAIN PRAGMA attack) forward and reversed.',
  });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
