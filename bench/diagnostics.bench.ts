// What the reward diagnostics panel costs on a large run: 10,000 SkyRL-shaped trajectories over Spider train (5,000
// questions × 2 samples: the gold itself and a near miss), scored end to end with the sqltrail panel the way the
// editor does it (scoreRun through a 2-worker sandbox pool, executions included), then the run aggregates
// (runDiagnostics), the size of the `run` message the host posts to the webview, and per-trajectory drill-downs
// (trajectoryDiagnostics: panel, verdict, ODT view, clause rows) with the run's resources warm, as after a click.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { percentile, requireSpider, writeResult } from './common';
import { createSqlPool } from '../src/core/db';
import { createScoringResources, loadPanel } from '../src/core/rewards';
import { scoreRun } from '../src/core/rewards/scoreRun';
import { runDiagnostics } from '../src/core/rewards/report';
import { trajectoryDiagnostics } from '../src/core/rewards/trajectoryReport';
import { TRAJECTORY_SCHEMA, type TrajectoryRecord, type TrajectoryTurn } from '../src/core/trajectories/types';

interface SpiderExample {
  query: string;
  db_id: string;
  question: string;
}

const QUESTIONS = Number(process.env.QUARRY_BENCH_QUESTIONS ?? 5000);
const DRILLDOWNS = 200;

/** A deterministic near miss: a changed LIMIT, a flipped order, a dropped DISTINCT, or one more row. */
function nearMiss(sql: string): string {
  if (/\bLIMIT\s+\d+/i.test(sql)) return sql.replace(/\bLIMIT\s+(\d+)/i, (_, n: string) => `LIMIT ${Number(n) + 1}`);
  if (/\bDESC\b/i.test(sql)) return sql.replace(/\bDESC\b/i, 'ASC');
  if (/^SELECT\s+DISTINCT\s+/i.test(sql)) return sql.replace(/^SELECT\s+DISTINCT\s+/i, 'SELECT ');
  return sql.replace(/^SELECT\s+/i, 'SELECT DISTINCT ');
}

function turn(index: number, assistant: string, sql: string, kind: 'execute' | 'answer'): TrajectoryTurn {
  return {
    index,
    assistant,
    action: {
      kind,
      sql,
      thought: 'look',
      mdp: kind === 'answer' ? ['FINALIZE'] : ['PROPOSE', 'EXECUTE'],
      problems: [],
    },
    observations: [],
    exec:
      kind === 'execute'
        ? { ok: true, errorClass: null, error: null, columns: [], rowCount: 1, truncated: false, ms: 1 }
        : null,
    finishReason: 'stop',
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { modelMs: 0, envMs: 0 },
  };
}

function record(ex: SpiderExample, q: number, sample: number, dbPath: string): TrajectoryRecord {
  const sql = ex.query.replace(/\s+/g, ' ').trim();
  const pred = sample === 0 ? sql : nearMiss(sql);
  const turns = [
    ...(q % 3 === 0
      ? [
          turn(
            0,
            `<think>look</think>\n<sql>SELECT * FROM sqlite_master LIMIT 1</sql>`,
            'SELECT * FROM sqlite_master LIMIT 1',
            'execute',
          ),
        ]
      : []),
  ];
  turns.push(turn(turns.length, `<think>answer</think>\n<solution>${pred}</solution>`, pred, 'answer'));
  return {
    schema: TRAJECTORY_SCHEMA,
    id: `q${q}-s${sample}`,
    groupId: `q${q}`,
    sample,
    createdAt: '2026-01-01T00:00:00.000Z',
    task: {
      id: `spider-train:${q}`,
      question: ex.question,
      db: { path: dbPath, id: ex.db_id, sha256: '0'.repeat(64) },
      evidence: null,
      history: [],
      gold: sql,
      difficulty: null,
    },
    protocol: { name: 'skyrl', config: { maxTurns: 5 } },
    model: { spec: 'bench', sampling: {} },
    prompt: [],
    turns,
    finalSql: pred,
    end: 'answer',
    error: null,
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { totalMs: 0, modelMs: 0, envMs: 0 },
    meta: {},
  };
}

async function main(): Promise<void> {
  const dir = requireSpider();
  const examples = (JSON.parse(readFileSync(join(dir, 'train_spider.json'), 'utf8')) as SpiderExample[]).slice(
    0,
    QUESTIONS,
  );
  const records = examples.flatMap((ex, q) => {
    const db = join(dir, 'database', ex.db_id, `${ex.db_id}.sqlite`);
    return [record(ex, q, 0, db), record(ex, q, 1, db)];
  });
  const load = loadavg()[0];
  const pool = createSqlPool({ size: 2, spares: 0 });
  try {
    const resources = createScoringResources({ run: pool, timeoutMs: 5000 });
    const panel = loadPanel('sqltrail');
    const t0 = performance.now();
    const report = await scoreRun(records, panel, { resources });
    const scoreS = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    const diag = runDiagnostics(report, records, resources);
    const aggregateMs = performance.now() - t1;
    const t2 = performance.now();
    const message = JSON.stringify({ type: 'run', run: diag });
    const serializeMs = performance.now() - t2;

    const picks = Array.from({ length: DRILLDOWNS }, (_, i) => records[Math.floor((i * records.length) / DRILLDOWNS)]);
    const ms: number[] = [];
    for (const r of picks) {
      const s = performance.now();
      await trajectoryDiagnostics(r, panel, resources);
      ms.push(performance.now() - s);
    }
    ms.sort((a, b) => a - b);
    const result = {
      what:
        'diagnostics on a 10,000-trajectory run: scoreRun (sqltrail, executions through a 2-worker pool) + ' +
        'runDiagnostics + run message size + drill-downs',
      trajectories: records.length,
      scored: report.scored.length,
      skipped: report.skipped.length,
      ex: diag.ex,
      flags: diag.flags.length,
      zeroVarianceGroups: diag.groups?.zeroVariance ?? 0,
      scoreRunSeconds: Math.round(scoreS * 10) / 10,
      scoredPerSecond: Math.round(report.scored.length / scoreS),
      runDiagnosticsMs: Math.round(aggregateMs),
      runMessageBytes: message.length,
      serializeMs: Math.round(serializeMs),
      drilldownMs: {
        median: +percentile(ms, 50).toFixed(2),
        p95: +percentile(ms, 95).toFixed(2),
        max: +ms[ms.length - 1].toFixed(2),
      },
      loadAverageAtStart: load,
      cores: cpus().length,
    };
    console.log(JSON.stringify(result, null, 2));
    writeResult('diagnostics', result);
  } finally {
    await pool.close();
  }
}

main().catch((err: unknown) => {
  console.error(`bench diagnostics: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
});
