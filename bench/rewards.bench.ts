// Reward scoring throughput on Spider train: every gold query paired with a perturbed prediction (identity for one
// in eight), wrapped in a SQL-Trail-shaped trajectory of 1–3 turns, scored with each built-in panel.
//
// What is measured: scoring only. Execution is precomputed: a warm-up pass runs every distinct (database, SQL) once
// through the sandbox pool; the measured passes serve those results from a map (no I/O, no workers). Each measured
// pass starts with empty analysis caches, so every prediction is parsed inside the timed region and every gold query
// is parsed once on first sight (its parse, bigrams, schema items, clauses and Spider hardness are then reused, as in
// a training run where G samples share a gold). Included per trajectory: the panel's terms (format check of the raw
// turns, turn budget, difficulty from the gold's Spider hardness, bigram/schema/clause analysis), the evaluator's
// query rewriting and result comparison, and building the result. One process, one thread: per-core throughput.
// The share of time spent in SQL analysis is the time inside the analysis caches' compute functions. Throughput is
// reported per CPU-second of this process (robust when other processes share the cores) and per wall-clock second.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { requireSpider, writeResult } from './common';
import { createSqlPool } from '../src/core/db';
import type { ExecRequest, ExecResult } from '../src/core/db/types';
import {
  registerBuiltins,
  listPanels,
  loadPanel,
  scorePanel,
  createScoringResources,
  type ScoringResources,
  type ResolvedPanel,
} from '../src/core/rewards';
import { TRAJECTORY_SCHEMA, type TrajectoryRecord, type TrajectoryTurn } from '../src/core/trajectories/types';

interface SpiderExample {
  query: string;
  db_id: string;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Deterministic near-miss predictions; the kind cycles with the index (1 in 8 is the gold itself). */
function perturb(sql: string, i: number): string {
  const kinds: Array<(s: string) => string | undefined> = [
    (s) => s,
    (s) =>
      /\bDESC\b/i.test(s)
        ? s.replace(/\bDESC\b/i, 'ASC')
        : /\bORDER BY\b/i.test(s)
          ? s.replace(/(\bORDER BY\s+\S+)/i, '$1 DESC')
          : undefined,
    (s) =>
      /'[^']*'/.test(s)
        ? s.replace(/'([^']*)'/, "'$1x'")
        : /\b\d+\b/.test(s)
          ? s.replace(/\b(\d+)\b/, (_, n: string) => String(Number(n) + 1))
          : undefined,
    (s) => (/\bcount\s*\(/i.test(s) ? s.replace(/\bcount\s*\(/i, 'max(') : undefined),
    (s) =>
      /\bWHERE\b/i.test(s) ? s.replace(/\bWHERE\b.*?(?=\s(?:GROUP BY|ORDER BY|LIMIT)\b|$)/i, '').trim() : undefined,
    (s) => (/\bLIMIT\b/i.test(s) ? s.replace(/\bLIMIT\s+\d+/i, 'LIMIT 2') : `${s} LIMIT 1`),
    (s) =>
      /^SELECT\s+DISTINCT\b/i.test(s)
        ? s.replace(/^SELECT\s+DISTINCT\s+/i, 'SELECT ')
        : s.replace(/^SELECT\s+/i, 'SELECT DISTINCT '),
    (s) => s.replace(/^SELECT\s+(\S+)/i, 'SELECT $1x'),
  ];
  for (let k = 0; k < kinds.length; k++) {
    const out = kinds[(i + k) % kinds.length](sql);
    if (out !== undefined && (out !== sql || (i + k) % kinds.length === 0)) return out;
  }
  return sql;
}

function turn(index: number, assistant: string, sql: string, kind: 'execute' | 'answer'): TrajectoryTurn {
  return {
    index,
    assistant,
    action: { kind, sql, thought: 'r', mdp: kind === 'answer' ? ['FINALIZE'] : ['PROPOSE', 'EXECUTE'], problems: [] },
    observations: [],
    exec:
      kind === 'answer'
        ? null
        : { ok: true, errorClass: null, error: null, columns: ['x'], rowCount: 1, truncated: false, ms: 1 },
    finishReason: 'stop',
    usage: { promptTokens: 0, completionTokens: 0 },
    timings: { modelMs: 0, envMs: 0 },
  };
}

function trajectoryOf(i: number, dbPath: string, dbId: string, gold: string, pred: string): TrajectoryRecord {
  const turns: TrajectoryTurn[] = [];
  const explore = i % 3;
  for (let k = 0; k < explore; k++) {
    turns.push(turn(k, `<reasoning>probe ${k}</reasoning>\n<sql>${pred}</sql>`, pred, 'execute'));
  }
  turns.push(turn(explore, `<reasoning>final</reasoning>\n<solution>${pred}</solution>`, pred, 'answer'));
  return {
    schema: TRAJECTORY_SCHEMA,
    id: `t${i}`,
    groupId: `t${i}`,
    sample: 0,
    createdAt: '2026-01-01T00:00:00Z',
    task: {
      id: `spider-train:${i}`,
      question: '',
      db: { path: dbPath, id: dbId, sha256: '' },
      evidence: null,
      history: [],
      gold,
      difficulty: null,
    },
    protocol: { name: 'sqltrail', config: { maxTurns: 5 }, budget: 5 },
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

/** Resources whose executions come from `results` and whose analysis caches time their compute functions. */
function measuredResources(
  results: Map<string, ExecResult>,
  timeoutMs: number,
  analysisMs: Record<string, number>,
): ScoringResources {
  const base = createScoringResources({
    run: (req: ExecRequest) => {
      const r = results.get(req.db + '\0' + req.sql);
      if (!r) throw new Error(`bench: execution of ${req.sql} on ${req.db} was not precomputed`);
      return Promise.resolve(r);
    },
    timeoutMs,
  });
  let depth = 0;
  return {
    timeoutMs,
    exec: base.exec,
    memo<T>(ns: string, key: string, compute: () => T): T {
      return base.memo(ns, key, () => {
        // Time only outermost computes so nested ones (schema items → database schema) are not counted twice.
        if (depth > 0) return compute();
        depth++;
        const t0 = performance.now();
        try {
          return compute();
        } finally {
          analysisMs[ns] = (analysisMs[ns] ?? 0) + performance.now() - t0;
          depth--;
        }
      });
    },
  };
}

async function main(): Promise<void> {
  const spider = requireSpider();
  registerBuiltins();
  const examples: SpiderExample[] = JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8'));
  const limit = process.env.QUARRY_BENCH_LIMIT ? Number(process.env.QUARRY_BENCH_LIMIT) : examples.length;
  const items = examples.slice(0, limit).map((e, i) => {
    const gold = oneLine(e.query);
    const dbPath = join(spider, 'database', e.db_id, `${e.db_id}.sqlite`);
    return trajectoryOf(i, dbPath, e.db_id, gold, perturb(gold, i));
  });
  const panels = listPanels();
  const load = loadavg()[0];
  if (load > 1.5)
    console.log(`note: load average ${load.toFixed(2)} on ${cpus().length} cores; other processes compete for the CPU`);
  const timeoutMs = 10_000;

  // Warm-up: every panel once with a recording executor, so every (db, SQL as run) is executed exactly once.
  const results = new Map<string, ExecResult>();
  const pool = createSqlPool({ size: 2, spares: 0 });
  const t0 = performance.now();
  try {
    const recording = createScoringResources({
      run: async (req) => {
        const r = await pool.exec(req);
        results.set(req.db + '\0' + req.sql, r);
        return r;
      },
      timeoutMs,
    });
    // The gold-only trajectories of the gold-warm setting run the gold as a prediction too (e.g. r_syntax).
    const goldOnly = items.map((t, i) => trajectoryOf(i, t.task.db.path, t.task.db.id!, t.task.gold!, t.task.gold!));
    for (const name of panels) {
      const panel = loadPanel(name);
      const batch = 64;
      for (const set of [items, goldOnly]) {
        for (let i = 0; i < set.length; i += batch) {
          await Promise.all(
            set
              .slice(i, i + batch)
              .map((t) =>
                scorePanel(panel, { goldSql: t.task.gold!, dbPath: t.task.db.path, trajectory: t }, recording),
              ),
          );
        }
      }
    }
  } finally {
    await pool.close();
  }
  const precomputeSeconds = (performance.now() - t0) / 1000;
  console.log(
    `precomputed ${results.size} executions for ${items.length} trajectories in ${precomputeSeconds.toFixed(1)} s`,
  );

  // Two settings per panel. cold: every analysis cache empty, so each gold query (each appears once in Spider train)
  // is parsed inside the timed region. gold-warm: the gold queries' analyses are already cached (untimed pass scoring
  // each gold against itself), as when G samples or later epochs share a gold — the per-trajectory cost.
  const wanted = process.env.QUARRY_BENCH_PANELS ? process.env.QUARRY_BENCH_PANELS.split(',') : panels;
  const out: Record<string, unknown> = {};
  for (const name of panels.filter((p) => wanted.includes(p))) {
    const panel: ResolvedPanel = loadPanel(name);
    const entry: Record<string, unknown> = { trajectories: items.length };
    for (const setting of ['cold', 'gold-warm'] as const) {
      const runs: Array<{
        seconds: number;
        perSecond: number;
        perCpuSecond: number;
        analysisShare: number;
        analysisMs: Record<string, number>;
      }> = [];
      for (let rep = 0; rep < 3; rep++) {
        const analysisMs: Record<string, number> = {};
        const res = measuredResources(results, timeoutMs, analysisMs);
        if (setting === 'gold-warm') {
          // Gold-only trajectories: no prediction of the timed pass is analysed here.
          for (const [i, t] of items.entries()) {
            const goldOnly = trajectoryOf(i, t.task.db.path, t.task.db.id!, t.task.gold!, t.task.gold!);
            await scorePanel(panel, { goldSql: t.task.gold!, dbPath: t.task.db.path, trajectory: goldOnly }, res);
          }
          for (const k of Object.keys(analysisMs)) delete analysisMs[k];
        }
        let total = 0;
        const s0 = performance.now();
        const c0 = process.cpuUsage();
        for (const t of items)
          total += (await scorePanel(panel, { goldSql: t.task.gold!, dbPath: t.task.db.path, trajectory: t }, res))
            .total;
        const cpu = process.cpuUsage(c0);
        const seconds = (performance.now() - s0) / 1000;
        // CPU seconds of this process (the scoring thread plus GC helpers): throughput per core even when other
        // processes share the machine and stretch the wall clock.
        const cpuSeconds = (cpu.user + cpu.system) / 1e6;
        const analysis = Object.values(analysisMs).reduce((a, b) => a + b, 0);
        runs.push({
          seconds,
          perSecond: items.length / seconds,
          perCpuSecond: items.length / cpuSeconds,
          analysisShare: analysis / 1000 / seconds,
          analysisMs,
        });
        if (!Number.isFinite(total)) throw new Error(`bench: non-finite total for ${name}`);
      }
      runs.sort((a, b) => b.perSecond - a.perSecond);
      const best = runs[0];
      const median = runs[1];
      const cpuMedian = runs.map((r) => r.perCpuSecond).sort((a, b) => a - b)[1];
      entry[setting] = {
        perCpuSecondMedian: Math.round(cpuMedian),
        perSecondBest: Math.round(best.perSecond),
        perSecondMedian: Math.round(median.perSecond),
        secondsMedian: +median.seconds.toFixed(3),
        analysisShareMedian: +median.analysisShare.toFixed(3),
        analysisMsByCacheMedian: Object.fromEntries(
          Object.entries(median.analysisMs).map(([k, v]) => [k, Math.round(v)]),
        ),
      };
      console.log(
        `${name.padEnd(9)} ${setting.padEnd(9)} ${String(Math.round(cpuMedian)).padStart(6)} per ` +
          `CPU-second, ${String(Math.round(median.perSecond)).padStart(6)} per wall second (medians of 3; ` +
          `best wall ${Math.round(best.perSecond)}), SQL ` +
          `analysis ${(100 * median.analysisShare).toFixed(1)}% of scoring time`,
      );
    }
    out[name] = entry;
  }
  writeResult('rewards', {
    what: 'scoring throughput per panel, one thread; executions precomputed (see header of bench/rewards.bench.ts)',
    items: items.length,
    distinctExecutions: results.size,
    precomputeSeconds: +precomputeSeconds.toFixed(1),
    target: '>= 2000 trajectories/s per core',
    loadAverageAtStart: +load.toFixed(2),
    panels: out,
  });
}

main().catch((err) => {
  console.error(`bench rewards: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
