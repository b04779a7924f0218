// `quarry data rl`: a benchmark-format dataset as RL training data in verl's schema (core/training/rlRecord.ts), one
// record per question, its prompt built by the real environment (the protocol's opening messages with the database's
// schema). Curation from the papers: gold queries that fail are always dropped and empty-result golds on request
// (MTIR-SQL §4.1, found by the integrity flags); with a `quarry bench --samples G` run, questions are kept by pass@G
// (SQL-Trail App. A.6) and ordered into curriculum levels by success count (MTSQL-R1 §3.3.1). Writes train.parquet,
// train.jsonl (the same records) and data.json (sources and their sha256, filters, counts, what was dropped and why).
// Built for synthetic corpora of millions of questions: golds run in chunks, records stream to both files as they are
// built (Parquet in row groups of bounded size), and data.json counts every drop but lists only the first
// DROPPED_LISTED. Questions whose database is missing are skipped and each such database named once, as `quarry
// bench` does (--strict refuses instead).
import { cpus } from 'node:os';
import { dirname } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { evalMode } from '../../core/eval/modes';
import { evalModeOf, loadDataset } from '../../core/datasets';
import { databasePath, skippedDatabaseText } from '../../core/datasets/databases';
import { findTablesJson } from '../../core/datasets/hardness';
import type { Dataset, DatasetName, DatasetTask } from '../../core/datasets/types';
import { createSqlPool, type SqlPool } from '../../core/db';
import { getProtocol } from '../../core/agent/protocols';
import { mtirPromptForTemplateTools } from '../../core/agent/protocols/mtir';
import { DataInputError } from './errors';
import { startEnv, EpisodeSetupError } from '../../core/agent/loop';
import { SchemaCache } from '../../core/agent/env';
import { odtFeedback } from '../../core/agent/feedback';
import type { ProtocolName } from '../../core/agent/types';
import { checkGolds, type GoldFindings } from '../../core/training/goldChecks';
import {
  curriculumLevels,
  selectByDifficulty,
  type KeepChoice,
  type QuestionOutcome,
} from '../../core/training/difficulty';
import { rlColumns, toRlRecord } from '../../core/training/rlRecord';
import { fileSha256 } from '../../core/trajectories/dbHash';
import { readDifficultyRun, outcomesFor, type DifficultyRun } from './difficultyRun';
import {
  DATA_SCHEMA,
  prepareOutDir,
  sourceFile,
  RecordsWriter,
  writeDataJson,
  type OutputFile,
  type SourceFile,
} from './outputs';
import type { RowGroupLimits } from './parquet';

export const RL_FILES = { parquet: 'train.parquet', jsonl: 'train.jsonl' } as const;

/** Databases are hashed into data.json only while their total size stays under this (BIRD's run to tens of GB). */
const DB_HASH_LIMIT_BYTES = 2 * 1024 ** 3;
/** data.json lists this many dropped questions at most (the counts cover all): a corpus of millions stays readable. */
export const DROPPED_LISTED = 1000;
/** Distinct gold queries sent to the pool at a time. */
const GOLD_CHUNK = 5000;

interface RlDataOptions {
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
  /** Refuse (DatasetError naming them) when a question's database is missing, instead of skipping its questions. */
  strict?: boolean;
  /**
   * Where the policy is told about the protocol's tool. 'prompt' (default): in the prompt, as the paper prints it
   * (TRL, SkyRL, the editor). 'chat-template': the trainer's chat template declares it (verl's tool agent loop passes
   * `tools=` to apply_chat_template), so the prompt leaves its declaration out and the tool is declared once.
   * MTIR only (the protocol verl's tool loop serves, core/training/verlLaunch.ts VERL_TOOL_PROTOCOLS).
   */
  toolsDeclared?: ToolsDeclared;
  /** train.parquet's row groups (default: parquet.ts's ROW_GROUP_ROWS and ROW_GROUP_BYTES). */
  rowGroup?: RowGroupLimits;
}

type ToolsDeclared = 'prompt' | 'chat-template';
/** Protocols whose prompt can leave the tool's declaration to the chat template. */
const TEMPLATE_TOOL_PROTOCOLS: readonly ProtocolName[] = ['mtir'];

/** Why a question is not in the output: a short code (counted in data.json) and the words. */
interface DroppedQuestion {
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

interface RlDataResult {
  records: number;
  /** Every question in the file, those skipped for a missing database included. */
  questions: number;
  /** The first DROPPED_LISTED dropped questions (data.json's counts.dropped counts them all). */
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
  const toolsDeclared = opts.toolsDeclared ?? 'prompt';
  if (toolsDeclared === 'chat-template' && !TEMPLATE_TOOL_PROTOCOLS.includes(opts.protocol))
    throw new DataInputError(
      `protocol ${opts.protocol} declares no tool a chat template could declare instead ` +
        `(only ${TEMPLATE_TOOL_PROTOCOLS.join(', ')})`,
    );
  const dataset = loadDataset(opts.dataset, opts.file, opts.dbDir, { skipMissing: !opts.strict });
  const missing = (dataset.skipped ?? []).map((s) => ({
    db_id: s.dbId,
    path: databasePath(dataset.dbDir, s.dbId),
    questions: s.questions,
  }));
  const skippedQuestions = missing.reduce((n, m) => n + m.questions, 0);
  const questions = dataset.tasks.length + skippedQuestions;
  const run = opts.difficulty ? await readDifficultyRun(opts.difficulty.runDir) : null;
  const outcomes = run ? outcomesFor(run, dataset) : null;
  const tables = findTablesJson(dataset.file, dataset.dbDir);
  const inputs = [dataset.file, tables, run?.report].filter((p): p is string => p !== undefined);
  prepareOutDir(opts.outDir, 'rl', [RL_FILES.parquet, RL_FILES.jsonl], inputs);
  const warnings = (dataset.skipped ?? []).map((s) => skippedDatabaseText(dataset.dbDir, s));
  if (run) warnings.push(...runWarnings(run, opts.protocol, maxTurns));

  const pool = opts.pool ?? createSqlPool({ size: Math.max(1, Math.min(2, cpus().length)), spares: 0 });
  const dropped: DroppedQuestion[] = [];
  const droppedBy: Record<string, number> = skippedQuestions ? { 'missing-database': skippedQuestions } : {};
  let droppedTotal = 0;
  const drop = (task: DatasetTask, reason: DroppedQuestion['reason'], detail: string) => {
    droppedBy[reason] = (droppedBy[reason] ?? 0) + 1;
    if (droppedTotal++ < DROPPED_LISTED)
      dropped.push({ index: task.index, id: task.id, db_id: task.dbId, reason, detail });
  };
  let built: Built;
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
          countedBy: c.countedBy,
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
    const out = await RecordsWriter.open(
      opts.outDir,
      'train',
      rlColumns({ curriculum: opts.curriculumBins !== undefined }),
      { 'quarry.kind': 'rl', 'quarry.schema': DATA_SCHEMA },
      opts.rowGroup,
    );
    try {
      built = await buildRecords(kept, out, {
        dataset,
        protocol: opts.protocol,
        maxTurns,
        toolsDeclared,
        pool,
        drop,
        onProgress: (d, n) => opts.onProgress?.('prompts', d, n),
      });
    } catch (err) {
      await out.abort();
      throw err;
    }
    promptMs = performance.now() - p0;
  } finally {
    if (!opts.pool) await pool.close();
  }

  const { outputs, records, byHardness } = built;
  if (records === 0)
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
    dataset: { name: dataset.name, file: dataset.file, dbDir: dataset.dbDir, questions },
    // Said only for a protocol with a tool to declare (`quarry train` reads a missing field as 'prompt').
    protocol: TEMPLATE_TOOL_PROTOCOLS.includes(opts.protocol)
      ? { name: opts.protocol, maxTurns, toolsDeclared }
      : { name: opts.protocol, maxTurns },
    sources,
    databases: await databaseHashes(dataset),
    missing,
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
      questions,
      written: records,
      dropped: droppedBy,
      emptyGoldKept: emptyKept,
      byHardness,
    },
    curriculum,
    outputs,
    dropped,
    droppedNotListed: droppedTotal - dropped.length,
    timings: {
      totalMs: Math.round(performance.now() - t0),
      goldMs: Math.round(goldMs),
      promptMs: Math.round(promptMs),
    },
  };
  const dataJson = await writeDataJson(opts.outDir, doc);
  return { records, questions, dropped, outputs, dataJson, warnings, doc };
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

/**
 * Each distinct (database, gold) once, through the pool, GOLD_CHUNK at a time (a corpus of millions is never one
 * batch); the integrity flags say which fail and which are empty.
 */
async function runGolds(
  dataset: Dataset,
  pool: SqlPool,
  onProgress: (done: number, total: number) => void,
): Promise<GoldFindings> {
  const timeoutMs = evalMode(evalModeOf(dataset.name)).defaultTimeoutMs;
  // database → gold → what its run found: null (usable), 'empty', or why it fails.
  const seen = new Map<string, Map<string, string | null>>();
  const verdictOf = (t: DatasetTask) => seen.get(t.dbPath)?.get(t.gold);
  const failing = new Map<string, string>();
  const empty = new Set<string>();
  const tasks = dataset.tasks;
  let done = 0;
  for (let start = 0; start < tasks.length; ) {
    // The next tasks up to GOLD_CHUNK distinct unseen golds.
    const batch: DatasetTask[] = [];
    const inBatch = new Set<string>();
    let end = start;
    for (; end < tasks.length && batch.length < GOLD_CHUNK; end++) {
      const t = tasks[end];
      const key = `${t.dbPath}\0${t.gold}`;
      if (verdictOf(t) !== undefined || inBatch.has(key)) continue;
      inBatch.add(key);
      batch.push(t);
    }
    const results = await pool.execBatch(
      batch.map((t) => ({ db: t.dbPath, sql: t.gold, timeoutMs, maxRows: 1, maxCellChars: 100 })),
      { onProgress: (d) => onProgress(done + d, tasks.length) },
    );
    const found = checkGolds(batch.map((t, i) => ({ id: String(i), gold: t.gold, result: results[i] })));
    batch.forEach((t, i) => {
      const verdict = found.failing.get(String(i)) ?? (found.empty.has(String(i)) ? 'empty' : null);
      let byGold = seen.get(t.dbPath);
      if (!byGold) seen.set(t.dbPath, (byGold = new Map()));
      byGold.set(t.gold, verdict);
    });
    for (; start < end; start++) {
      const t = tasks[start];
      const verdict = verdictOf(t);
      if (verdict === 'empty') empty.add(t.id);
      else if (verdict) failing.set(t.id, verdict);
    }
    done = end;
    onProgress(done, tasks.length);
  }
  return { failing, empty };
}

interface BuildContext {
  dataset: Dataset;
  protocol: ProtocolName;
  maxTurns: number;
  toolsDeclared: ToolsDeclared;
  pool: SqlPool;
  drop: (task: DatasetTask, reason: DroppedQuestion['reason'], detail: string) => void;
  onProgress: (done: number, total: number) => void;
}

interface Built {
  records: number;
  byHardness: Record<string, number>;
  outputs: OutputFile[];
}

/** Each kept question's prompt from the real environment, its record streamed to `out` at once. */
async function buildRecords(kept: Kept[], out: RecordsWriter, ctx: BuildContext): Promise<Built> {
  const protocol = getProtocol(ctx.protocol);
  const schemaCache = new SchemaCache();
  const byHardness: Record<string, number> = {};
  let records = 0;
  let done = 0;
  for (const k of kept) {
    let prompt;
    try {
      ({ prompt } = await startEnv({
        task: k.task,
        protocol,
        config: { maxTurns: ctx.maxTurns },
        pool: ctx.pool,
        schemaCache,
        feedback: protocol.needsOracle ? odtFeedback : undefined,
      }));
    } catch (err) {
      if (!(err instanceof EpisodeSetupError)) throw err;
      ctx.drop(k.task, 'prompt-failed', err.message);
    }
    if (prompt) {
      const record = toRlRecord({
        dataset: ctx.dataset.name,
        task: k.task,
        prompt: ctx.toolsDeclared === 'chat-template' ? mtirPromptForTemplateTools(prompt) : prompt,
        protocol: ctx.protocol,
        maxTurns: ctx.maxTurns,
        curriculumLevel: k.level,
        toolsInTemplate: ctx.toolsDeclared === 'chat-template',
      });
      await out.add(record as unknown as Record<string, unknown>);
      const h = record.extra_info.hardness ?? 'unknown';
      byHardness[h] = (byHardness[h] ?? 0) + 1;
      records++;
    }
    ctx.onProgress(++done, kept.length);
  }
  return { records, byHardness, outputs: await out.finish() };
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
