// Runaway queries mixed into a stream of normal ones: how far past its budget a runaway is stopped, what the normal
// queries' latency is meanwhile, and how many worker processes are left once the pool is closed.
// QUARRY_BENCH_LIMIT=N limits the normal queries (default 600); one runaway is mixed in per 10 normal queries.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { requireSpider, writeResult, percentile } from './common';
import { createSqlPool } from '../src/core/db';
import type { ExecRequest, ExecResult } from '../src/core/db';

const spider = requireSpider();
const limit = Number(process.env.QUARRY_BENCH_LIMIT ?? 600);
const budgetMs = Number(process.env.QUARRY_RUNAWAY_BUDGET_MS ?? 500);
const dbPath = (id: string) => join(spider, 'database', id, `${id}.sqlite`);

const gold = (JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8')) as { db_id: string; query: string }[])
  .filter((g) => existsSync(dbPath(g.db_id)))
  .slice(0, limit);

/** The database whose two largest tables make the most expensive cross join. */
function largestTables(): { db: string; a: string; b: string; rows: number } {
  let best = { db: '', a: '', b: '', rows: -1 };
  for (const id of [...new Set(gold.map((g) => g.db_id))]) {
    const db = new Database(dbPath(id), { readonly: true });
    try {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[];
      const sizes = tables
        .map((t) => ({
          t,
          n: Number(
            db
              .prepare(`SELECT count(*) FROM "${t.replace(/"/g, '""')}"`)
              .pluck()
              .get(),
          ),
        }))
        .sort((x, y) => y.n - x.n);
      if (sizes.length >= 2 && sizes[0].n * sizes[1].n > best.rows)
        best = { db: dbPath(id), a: sizes[0].t, b: sizes[1].t, rows: sizes[0].n * sizes[1].n };
    } finally {
      db.close();
    }
  }
  return best;
}

const big = largestTables();
const q = (t: string) => `"${t.replace(/"/g, '""')}"`;
const runaways: { kind: string; sql: string }[] = [
  {
    kind: 'recursive-cte',
    sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
  },
  { kind: 'cross-join-4', sql: `SELECT count(*) FROM ${q(big.a)} a, ${q(big.b)} b, ${q(big.a)} c, ${q(big.b)} d` },
  { kind: 'memory-bomb-blob', sql: 'SELECT randomblob(2000000000)' },
  {
    kind: 'memory-bomb-concat',
    sql: "SELECT length(group_concat(printf('%.*c', 1000000, 'x'))) FROM " + `${q(big.a)} a, ${q(big.b)} b`,
  },
];

const reqs: { kind: string; req: ExecRequest }[] = [];
gold.forEach((g, i) => {
  reqs.push({ kind: 'normal', req: { db: dbPath(g.db_id), sql: g.query } });
  if (i % 10 === 9) {
    const r = runaways[((i / 10) | 0) % runaways.length];
    reqs.push({
      kind: r.kind,
      req: {
        db: r.kind.startsWith('cross') || r.kind.endsWith('concat') ? big.db : dbPath(g.db_id),
        sql: r.sql,
        timeoutMs: budgetMs,
      },
    });
  }
});

function childPids(): number[] {
  try {
    // ps is itself a child of this process while it runs: leave it out.
    return execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => s.trim().split(/\s+/))
      .filter(([pid, comm]) => Number(pid) > 0 && comm !== 'ps')
      .map(([pid]) => Number(pid));
  } catch {
    return []; // ps exits 1 when there are none
  }
}

async function main(): Promise<void> {
  const size = cpus().length;
  const pool = createSqlPool({ size });
  console.log(
    `timeouts: ${gold.length} normal + ${reqs.length - gold.length} runaway queries (budget ${budgetMs} ` +
      `ms), pool of ${size}; cross join on ${big.a} x ${big.b} (${big.rows} pairs)`,
  );
  const started = performance.now();
  const results: { kind: string; r: ExecResult }[] = await Promise.all(
    reqs.map(async ({ kind, req }) => ({ kind, r: await pool.exec(req) })),
  );
  const wall = (performance.now() - started) / 1000;
  const pidsBefore = pool.pids();
  await pool.close();
  const leftover =
    pidsBefore.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    }).length + childPids().length;

  const normal = results.filter((x) => x.kind === 'normal');
  const normalMs = normal.map((x) => x.r.ms).sort((a, b) => a - b);
  const killed = results.filter((x) => x.r.errorClass === 'timeout');
  const killLatency = killed.map((x) => x.r.ms - budgetMs).sort((a, b) => a - b);
  const byKind: Record<string, Record<string, number>> = {};
  for (const x of results.filter((y) => y.kind !== 'normal')) {
    const k = (byKind[x.kind] ??= {});
    const cls = x.r.errorClass ?? 'ok';
    k[cls] = (k[cls] ?? 0) + 1;
  }
  const summary = {
    normalQueries: normal.length,
    runawayQueries: results.length - normal.length,
    budgetMs,
    poolSize: size,
    wallSeconds: wall,
    runawayOutcomes: byKind,
    killLatencyMs: {
      p50: percentile(killLatency, 50),
      p99: percentile(killLatency, 99),
      max: killLatency.at(-1) ?? null,
      count: killLatency.length,
      target: 'p99 < 100',
    },
    normalLatencyMs: {
      p50: percentile(normalMs, 50),
      p99: percentile(normalMs, 99),
      errors: normal.filter((x) => !x.r.ok).length,
    },
    leftoverProcesses: leftover,
    leftoverTarget: 0,
    notes:
      'Kill latency = time from dispatch to the caller getting `timeout`, minus the budget; the worker is ' +
      'SIGKILLed at that moment and a warm spare takes its place. Normal latency is measured from ' +
      'dispatch, so it excludes queueing behind the pool.',
  };
  console.log(JSON.stringify(summary, null, 2));
  writeResult('timeouts', summary);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
