// `quarry data rl`: a benchmark-format dataset as RL training data in verl's schema (core/training/rlRecord.ts), one
// record per question, its prompt built by the real environment (the protocol's opening messages with the database's
// schema). Curation from the papers: gold queries that fail are always dropped and empty-result golds on request
// (MTIR-SQL §4.1, found by the integrity flags); with a `quarry bench --samples G` run, questions are kept by pass@G
// (SQL-Trail App. A.6) and ordered into curriculum levels by success count (MTSQL-R1 §3.3.1). Writes train.parquet,
// train.jsonl (the same records) and data.json (sources and their sha256, filters, counts, what was dropped and why).
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { evalMode } from '../../core/eval/modes';
import { evalModeOf, loadDataset } from '../../core/datasets';
import { findTablesJson } from '../../core/datasets/hardness';
import type { Dataset, DatasetName, DatasetTask } from '../../core/datasets/types';
import { createSqlPool, type SqlPool } from '../../core/db';
import { getProtocol } from '../../core/agent/protocols';
import { startEnv, EpisodeSetupError } from '../../core/agent/loop';
import { SchemaCache } from '../../core/agent/env';
import { odtFeedback } from '../../core/agent/feedback';
import type { ProtocolName } from '../../core/agent/types';
import { checkGolds } from '../../core/training/goldChecks';
import {
  curriculumLevels,
  selectByDifficulty,
  type KeepChoice,
  type QuestionOutcome,
} from '../../core/training/difficulty';
import { rlColumns, toRlRecord, type RlRecord } from '../../core/training/rlRecord';
import { fileSha256 } from '../../core/trajectories/dbHash';
import { readDifficultyRun, outcomesFor, type DifficultyRun } from './difficultyRun';
import {
  countBy,
  DATA_SCHEMA,
  prepareOutDir,
  sourceFile,
  writeDataJson,
  writeRecords,
  type OutputFile,
  type SourceFile,
} from './outputs';

export const RL_FILES = { parquet: 'train.parquet', jsonl: 'train.jsonl' } as const;

/** Databases are hashed into data.json only while their total size stays under this (BIRD's run to tens of GB). */
const DB_HASH_LIMIT_BYTES = 2 * 1024 ** 3;

export interface RlDataOptions {
  dataset: DatasetName;
  /** The dataset file and its database directory (absolute). */
  file: string;
  dbDir: string;
  protocol: ProtocolName;
  /** Default: the protocol's own turn budget. */
  maxTurns?: number;
  outDir: string;
  dropEmptyGold?: boolean;
  difficulty?: { runDir: string; keep: KeepChoice };
  curriculumBins?: number;
  /** The command line, recorded in data.json. */
  command?: string[];
  onProgress?: (phase: 'gold' | 'prompts', done: number, total: number) => void;
  /** A pool to share; by default one of min(2, CPUs) workers, closed at the end. */
  pool?: SqlPool;
}

/** Why a question is not in the output: a short code (counted in data.json) and the words. */
export interface DroppedQuestion {
  index: number;
  id: string;
  db_id: string;
  reason:
    | 'gold-fails'
    | 'empty-gold'
    | 'not-in-difficulty-run'
    | 'difficulty'
    | 'curriculum-too-easy'
    | 'prompt-failed';
  detail: string;
}

export interface RlDataResult {
  records: number;
  questions: number;
  dropped: DroppedQuestion[];
  outputs: OutputFile[];
  dataJson: string;
  /** Things worth a line on stderr (a difficulty run over another protocol, an incomplete run, nothing written). */
  warnings: string[];
  doc: Record<string, unknown>;
}

interface Kept {
  task: DatasetTask;
  level?: number;
  outcome?: QuestionOutcome;
}

export async function makeRlData(opts: RlDataOptions): Promise<RlDataResult> {
  const t0 = performance.now();
  const protocol = getProtocol(opts.protocol);
  const maxTurns = opts.maxTurns ?? protocol.defaults.maxTurns;
  const dataset = loadDataset(opts.dataset, opts.file, opts.dbDir);
  const run = opts.difficulty ? await readDifficultyRun(opts.difficulty.runDir) : null;
  const outcomes = run ? outcomesFor(run, dataset) : null;
  const tables = findTablesJson(dataset.file, dataset.dbDir);
  const inputs = [dataset.file, tables, run?.report].filter((p): p is string => p !== undefined);
  prepareOutDir(opts.outDir, 'rl', [RL_FILES.parquet, RL_FILES.jsonl], inputs);
  const warnings: string[] = [];
  if (run) warnings.push(...runWarnings(run, opts.protocol, maxTurns));

  const pool = opts.pool ?? createSqlPool({ size: Math.max(1, Math.min(2, cpus().length)), spares: 0 });
  const dropped: DroppedQuestion[] = [];
  const drop = (task: DatasetTask, reason: DroppedQuestion['reason'], detail: string) =>
    dropped.push({ index: task.index, id: task.id, db_id: task.dbId, reason, detail });
  let records: RlRecord[];
  let goldMs: number, promptMs: number;
  let emptyKept = 0;
  let curriculum: Record<string, unknown> | null = null;
  try {
    // 1. Gold queries: failing ones always go, empty ones on request.
    const g0 = performance.now();
    const golds = await runGolds(dataset, pool, (d, n) => opts.onProgress?.('gold', d, n));
    goldMs = performance.now() - g0;
    let candidates: DatasetTask[] = [];
    for (const t of dataset.tasks) {
      const fails = golds.failing.get(t.id);
      if (fails !== undefined) drop(t, 'gold-fails', `the gold SQL fails (${fails}): every rollout would score 0`);
      else if (golds.empty.has(t.id) && opts.dropEmptyGold)
        drop(t, 'empty-gold', 'the gold result is empty: an empty answer would score for free');
      else {
        if (golds.empty.has(t.id)) emptyKept++;
        candidates.push(t);
      }
    }

    // 2. Difficulty from the bench run, then curriculum levels.
    let kept: Kept[] = candidates.map((task) => ({ task }));
    if (outcomes && opts.difficulty) {
      const byId = new Map(candidates.map((t) => [t.id, t]));
      candidates = candidates.filter((t) => {
        if (outcomes.has(t.id)) return true;
        drop(t, 'not-in-difficulty-run', `not scored in the difficulty run ${run!.dir}`);
        return false;
      });
      const sel = selectByDifficulty(
        candidates.map((t) => outcomes.get(t.id)!),
        opts.difficulty.keep,
      );
      for (const d of sel.dropped) drop(byId.get(d.id)!, 'difficulty', `--keep ${opts.difficulty.keep}: ${d.reason}`);
      kept = sel.kept.map((q) => ({ task: byId.get(q.id)!, outcome: q }));
      if (opts.curriculumBins !== undefined) {
        const c = curriculumLevels(
          kept.map((k) => k.outcome!),
          opts.curriculumBins,
        );
        for (const d of c.discarded) drop(byId.get(d.id)!, 'curriculum-too-easy', d.reason);
        const byKept = new Map(kept.map((k) => [k.task.id, k]));
        kept = c.levels.flatMap((l) => l.ids.map((id) => ({ ...byKept.get(id)!, level: l.level })));
        let row = 0;
        curriculum = {
          bins: opts.curriculumBins,
          samples: run!.samples,
          levels: c.levels.map((l) => {
            const rows = { first: row, last: row + l.ids.length - 1 };
            row += l.ids.length;
            return { level: l.level, count: l.ids.length, successes: l.successes, rows };
          }),
          discarded: c.discarded.length,
        };
      }
    }

    // 3. Prompts from the real environment.
    const p0 = performance.now();
    records = await buildRecords(kept, {
      dataset,
      protocol: opts.protocol,
      maxTurns,
      pool,
      drop,
      onProgress: (d, n) => opts.onProgress?.('prompts', d, n),
    });
    promptMs = performance.now() - p0;
  } finally {
    if (!opts.pool) await pool.close();
  }

  const outputs = await writeRecords(
    opts.outDir,
    'train',
    rlColumns({ curriculum: opts.curriculumBins !== undefined }),
    records as unknown as Record<string, unknown>[],
    { 'quarry.kind': 'rl', 'quarry.schema': DATA_SCHEMA },
  );
  if (records.length === 0)
    warnings.push('no question was kept: the training files are empty (see data.json for why each was dropped)');
  const sources: SourceFile[] = [await sourceFile('dataset', dataset.file)];
  if (tables) sources.push(await sourceFile('tables', tables));
  if (run)
    sources.push({ role: 'difficulty-report', path: run.report, bytes: statSync(run.report).size, sha256: run.sha256 });
  const doc = {
    schema: DATA_SCHEMA as typeof DATA_SCHEMA,
    kind: 'rl' as const,
    createdAt: new Date().toISOString(),
    command: opts.command ?? null,
    dataset: { name: dataset.name, file: dataset.file, dbDir: dataset.dbDir, questions: dataset.tasks.length },
    protocol: { name: opts.protocol, maxTurns },
    sources,
    databases: await databaseHashes(dataset),
    filters: {
      failingGold: 'dropped',
      emptyGold: opts.dropEmptyGold ? 'dropped' : 'kept',
      difficulty:
        run && opts.difficulty
          ? {
              run: run.dir,
              samples: run.samples,
              keep: opts.difficulty.keep,
              model: run.model,
              protocol: run.protocol,
              scored: run.outcomes.size,
              complete: run.complete,
            }
          : null,
      curriculumBins: opts.curriculumBins ?? null,
    },
    counts: {
      questions: dataset.tasks.length,
      written: records.length,
      dropped: countBy(dropped, (d) => d.reason),
      emptyGoldKept: emptyKept,
      byHardness: countBy(records, (r) => r.extra_info.hardness ?? 'unknown'),
    },
    curriculum,
    outputs,
    dropped,
    timings: {
      totalMs: Math.round(performance.now() - t0),
      goldMs: Math.round(goldMs),
      promptMs: Math.round(promptMs),
    },
  };
  const dataJson = await writeDataJson(opts.outDir, doc);
  return { records: records.length, questions: dataset.tasks.length, dropped, outputs, dataJson, warnings, doc };
}

function runWarnings(run: DifficultyRun, protocol: ProtocolName, maxTurns: number): string[] {
  const out: string[] = [];
  if (run.protocol.name !== protocol)
    out.push(`the difficulty run used protocol ${run.protocol.name}, these prompts use ${protocol}`);
  if (run.protocol.maxTurns !== null && run.protocol.maxTurns !== maxTurns) {
    out.push(`the difficulty run allowed ${run.protocol.maxTurns} turns, these prompts allow ${maxTurns}`);
  }
  if (!run.complete) out.push(`the difficulty run ${run.dir} is incomplete: questions it did not score are dropped`);
  return out;
}

/** Each distinct (database, gold) once, through the pool; the integrity flags say which fail and which are empty. */
async function runGolds(dataset: Dataset, pool: SqlPool, onProgress: (done: number, total: number) => void) {
  const timeoutMs = evalMode(evalModeOf(dataset.name)).defaultTimeoutMs;
  const key = (t: DatasetTask) => `${t.dbPath}\0${t.gold}`;
  const distinct = [...new Map(dataset.tasks.map((t) => [key(t), t])).values()];
  const results = await pool.execBatch(
    distinct.map((t) => ({ db: t.dbPath, sql: t.gold, timeoutMs, maxRows: 1, maxCellChars: 100 })),
    { onProgress },
  );
  const byKey = new Map(distinct.map((t, i) => [key(t), results[i]]));
  return checkGolds(dataset.tasks.map((t) => ({ id: t.id, gold: t.gold, result: byKey.get(key(t))! })));
}

interface BuildContext {
  dataset: Dataset;
  protocol: ProtocolName;
  maxTurns: number;
  pool: SqlPool;
  drop: (task: DatasetTask, reason: DroppedQuestion['reason'], detail: string) => void;
  onProgress: (done: number, total: number) => void;
}

async function buildRecords(kept: Kept[], ctx: BuildContext): Promise<RlRecord[]> {
  const protocol = getProtocol(ctx.protocol);
  const schemaCache = new SchemaCache();
  const records: RlRecord[] = [];
  let done = 0;
  for (const k of kept) {
    try {
      const { prompt } = await startEnv({
        task: k.task,
        protocol,
        config: { maxTurns: ctx.maxTurns },
        pool: ctx.pool,
        schemaCache,
        feedback: protocol.needsOracle ? odtFeedback : undefined,
      });
      records.push(
        toRlRecord({
          dataset: ctx.dataset.name,
          task: k.task,
          prompt,
          protocol: ctx.protocol,
          maxTurns: ctx.maxTurns,
          curriculumLevel: k.level,
        }),
      );
    } catch (err) {
      if (!(err instanceof EpisodeSetupError)) throw err;
      ctx.drop(k.task, 'prompt-failed', err.message);
    }
    ctx.onProgress(++done, kept.length);
  }
  return records;
}

/** sha256 of each database the dataset uses, unless together they are too large to hash in passing. */
async function databaseHashes(dataset: Dataset) {
  const paths = [...new Set(dataset.tasks.map((t) => t.dbPath))].sort();
  const sizes = paths.map((p) => (existsSync(p) ? statSync(p).size : 0));
  const total = sizes.reduce((a, b) => a + b, 0);
  const hashed = total <= DB_HASH_LIMIT_BYTES;
  const files = [];
  for (const [i, p] of paths.entries()) {
    files.push({
      db_id: dirname(p).split(/[\\/]/).pop() ?? '',
      path: p,
      bytes: sizes[i],
      sha256: hashed ? await fileSha256(p) : null,
    });
  }
  return { dir: dataset.dbDir, count: paths.length, bytes: total, hashed, files };
}
