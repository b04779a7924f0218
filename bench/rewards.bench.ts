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
//
// Test-suite cost (`testSuite` in the results; QUARRY_BENCH_SUITE_ONLY=1 measures only it and keeps the panels'
// figures already in bench/results/rewards.json): a suite is built with `quarry testsuite build`'s code for the first
// QUARRY_BENCH_SUITE_DBS (default 4) databases of Spider train, and their questions (gold + perturbed prediction, as
// above) are scored with the skyrl panel end to end, executions included (a 2-worker pool as serve-env's default, 16
// scorings in flight, fresh caches each pass), once on the single database and once over the suite, alternating,
// three passes each; the time per scored item and how many rewards of 1 the suite takes back are reported.
import { readFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { requireSpider, resultsDir, writeResult } from './common';
import { buildSuite } from '../src/core/eval/testSuite/buildSuite';
import { TestSuite } from '../src/core/rewards/testSuite';
import { scorePanelDetailed, suiteCheckOf } from '../src/core/rewards/engine';
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

/** Scoring time per item with and without a test suite, executions included (see the header). */
async function suiteCost(spider: string, examples: SpiderExample[]): Promise<Record<string, unknown>> {
  const nDbs = Number(process.env.QUARRY_BENCH_SUITE_DBS ?? 4);
  const dbIds = [...new Set(examples.map((e) => e.db_id))].slice(0, nDbs);
  const chosen = examples.filter((e) => dbIds.includes(e.db_id));
  const items = chosen.map((e, i) => {
    const gold = oneLine(e.query);
    return trajectoryOf(i, join(spider, 'database', e.db_id, `${e.db_id}.sqlite`), e.db_id, gold, perturb(gold, i));
  });
  const work = mkdtempSync(join(tmpdir(), 'quarry-rewards-suite-'));
  try {
    const settings = { seed: 1, variants: 4, candidates: 16, maxNeighbours: 24, timeoutMs: 10_000 };
    const b0 = performance.now();
    const { report } = await buildSuite(
      dbIds.map((d) => ({
        dbId: d,
        source: join(spider, 'database', d, `${d}.sqlite`),
        golds: [...new Set(chosen.filter((e) => e.db_id === d).map((e) => oneLine(e.query)))],
      })),
      { outDir: join(work, 'ts'), jobs: 2, ...settings },
    );
    const buildSeconds = (performance.now() - b0) / 1000;
    const suite = new TestSuite(join(work, 'ts'));
    const panel = loadPanel('skyrl');
    const pool = createSqlPool({ size: 2, spares: 0 });
    const times: Record<'single' | 'suite', number[]> = { single: [], suite: [] };
    let takenBack = 0,
      singleWins = 0,
      suiteWins = 0;
    try {
      const pass = async (withSuite: boolean): Promise<number> => {
        const res = createScoringResources({ run: pool, timeoutMs: 10_000 });
        let next = 0;
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            while (next < items.length) {
              const t = items[next++];
              const r = await scorePanelDetailed(
                panel,
                {
                  goldSql: t.task.gold!,
                  dbPath: t.task.db.path,
                  trajectory: t,
                  testSuite: withSuite ? suite : null,
                  dbId: t.task.db.id,
                },
                res,
              );
              const s = suiteCheckOf(r);
              if (withSuite && s) {
                if (s.singleCorrect) singleWins++;
                if (s.singleCorrect && s.disagreed) takenBack++;
                if (s.singleCorrect && !s.disagreed) suiteWins++;
              }
            }
          }),
        );
        return (performance.now() - t0) / items.length;
      };
      await pass(false); // warm-up: the files in the page cache, handles open in the workers
      await pass(true);
      for (let rep = 0; rep < 3; rep++) {
        times.single.push(await pass(false));
        singleWins = takenBack = suiteWins = 0;
        times.suite.push(await pass(true));
      }
    } finally {
      await pool.close();
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1];
    const single = median(times.single),
      over = median(times.suite);
    console.log(
      `test suite: ${items.length} items on ${dbIds.length} databases (${report.totals.files} suite files, built in ` +
        `${buildSeconds.toFixed(1)} s); skyrl scoring ${single.toFixed(2)} ms per item on the single database, ` +
        `${over.toFixed(2)} ms over the suite (×${(over / single).toFixed(2)}); the suite takes back ${takenBack} ` +
        `of ${singleWins} rewards of 1`,
    );
    return {
      what:
        'skyrl panel end to end with execution (2 SQL workers, 16 in flight, fresh caches per pass): ms per scored ' +
        'item on the single database and over a test suite; medians of 3 alternating passes',
      databases: dbIds,
      items: items.length,
      suiteFiles: report.totals.files,
      buildSeconds: +buildSeconds.toFixed(1),
      buildSettings: settings,
      msPerItem: {
        singleDatabase: +single.toFixed(3),
        testSuite: +over.toFixed(3),
        ratio: +(over / single).toFixed(2),
      },
      passesMs: {
        singleDatabase: times.single.map((x) => +x.toFixed(3)),
        testSuite: times.suite.map((x) => +x.toFixed(3)),
      },
      rewardsOfOne: { singleDatabase: singleWins, keptBySuite: suiteWins, takenBackBySuite: takenBack },
      loadAverageAtStart: +loadavg()[0].toFixed(2),
      machine: {
        cores: cpus().length,
        cpu: cpus()[0]?.model,
        memGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
      },
      at: new Date().toISOString(),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const spider = requireSpider();
  registerBuiltins();
  const examples: SpiderExample[] = JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8'));
  if (process.env.QUARRY_BENCH_SUITE_ONLY) {
    const file = join(resultsDir, 'rewards.json');
    const kept = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    kept.testSuite = await suiteCost(spider, examples);
    writeFileSync(file, JSON.stringify(kept, null, 2) + '\n');
    console.log(`wrote ${file} (testSuite only)`);
    return;
  }
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
    testSuite: await suiteCost(spider, examples),
  });
}

main().catch((err) => {
  console.error(`bench rewards: ${(err as Error).stack ?? err}`);
  process.exit(1);
});
