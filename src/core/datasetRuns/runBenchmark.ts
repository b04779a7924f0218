// Runs a dataset through the agent: every question several times (sample 0 greedy, the others sampled; votePool.ts
// says how many and which vote), `jobs` episodes at once over one shared sandbox pool, trajectories appended as they
// finish, then the files `quarry eval` can re-score (predictions.sql, gold.sql) and report.json. Cancelling stops new
// episodes, cancels the running ones and keeps every question whose samples all finished.
// The `progress` protocol runs as Progress-SQL evaluates (§5, App. B): App. F's prompt, one turn, no ODT feedback.
import { exactMatcher } from './exactMatches';
import { exactMatchRates } from './report';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createSqlPool, type SqlPool } from '../db/pool';
import { runEpisode, EpisodeSetupError } from '../agent/loop';
import type { ProtocolConfig, ProtocolName } from '../agent/types';
import { PROGRESS_EVAL_CONFIG } from '../agent/protocols/progress';
import type { ChatModel, SamplingOptions } from '../models/types';
import { TrajectoryWriter } from '../trajectories/writer';
import type { TrajectoryRecord } from '../trajectories/types';
import { evalMode, type EvalModeName } from '../eval/modes';
import { testSuiteMode } from '../eval/testSuite/suiteMode';
import { evalModeOf } from '../datasets';
import type { Dataset, DatasetTask } from '../datasets/types';
import { scoreQuestion, goldLine, type QuestionScore } from './scoreQuestion';
import { AgentStatsAccumulator, goldWarnings, interactionEx, levelTable, type BenchReport } from './report';
import { loadResumable, unitKey } from './resume';
import { ensureDir } from './ensureDir';
import { defaultVotePool, episodesPerQuestion, voteInfo, voterSamples, type VotePool } from './votePool';

interface BenchOptions {
  dataset: Dataset;
  model: ChatModel;
  protocol: ProtocolName;
  /** K, the candidates of the vote (default 1: greedy only). Sample 0 always decodes greedily (temperature 0). */
  samples?: number;
  /** Which samples vote: default the protocol's (defaultVotePool). */
  votePool?: VotePool;
  /** Temperature of the sampled runs (default 1.0, the rollout temperature of SQL-Trail and Progress-SQL). */
  temperature?: number;
  /** Overrides the protocol's turn budget. */
  maxTurns?: number;
  /** Only the first N questions (turns, for SParC/CoSQL). */
  limit?: number;
  /** Episodes at once (default 1). */
  jobs?: number;
  maxTokens?: number;
  /** Per model call, ms. */
  modelTimeoutMs?: number;
  /** Per statement when scoring; default the evaluation mode's (spider 60 s, bird 30 s). */
  evalTimeoutMs?: number;
  outDir: string;
  signal?: AbortSignal;
  onProgress?: (p: BenchProgress) => void;
  /** A pool to share; by default one is created for the run (min(jobs, CPUs) workers) and closed after it. */
  pool?: SqlPool;
  /**
   * Stop the run after this many episodes in a row end in an error (default 10): a server that is down or a wrong
   * model name would otherwise fail every remaining question one by one.
   */
  maxConsecutiveErrors?: number;
  /**
   * Reuse the finished episodes already in outDir/trajectories.jsonl (same dataset file, model, protocol, turn budget
   * and temperature, else ResumeMismatchError) and run only the missing ones; failed episodes are run again.
   */
  resume?: boolean;
  /**
   * A test suite (TSDIR/<db_id>/*.sqlite, `quarry testsuite build`): a prediction is right only if it matches the gold
   * on every database of its suite. Each question is also scored on its one database, to report both and the cost.
   */
  testSuite?: string;
}

/** What scoring over a test suite changed and cost (report.json `testSuite`). */
interface TestSuiteSummary {
  dir: string;
  /** Greedy EX on the single database, for comparison with `ex.greedy` (over the suite). */
  singleDatabaseGreedy: number;
  /** Greedy predictions right on the database but wrong on the suite. */
  turnedIntoMisses: number;
  /** Mean wall time of scoring one question (all its samples), ms: on its one database, and over its suite. */
  scoringMsPerItem: { singleDatabase: number; testSuite: number };
}

export interface BenchProgress {
  episodesDone: number;
  episodes: number;
  questionsScored: number;
  questions: number;
  /** Greedy-correct questions among those scored so far. */
  greedyCorrect: number;
}

export const BENCH_FILES = {
  trajectories: 'trajectories.jsonl',
  predictions: 'predictions.sql',
  gold: 'gold.sql',
  report: 'report.json',
} as const;

interface QuestionState {
  task: DatasetTask;
  finals: (string | null)[];
  pending: number;
  cancelled: boolean;
}

/**
 * The protocol config a benchmark runs with: Progress-SQL's evaluation protocol for `progress` (one turn, no oracle;
 * a --max-turns other than 1 is refused), else the caller's turn budget over the protocol's defaults.
 */
export function benchProtocolConfig(
  protocol: ProtocolName,
  maxTurns: number | undefined,
): Partial<ProtocolConfig> | undefined {
  if (protocol === 'progress') {
    if (maxTurns !== undefined && maxTurns !== 1) {
      throw new RangeError(
        'the progress protocol is benchmarked as Progress-SQL evaluates, single-turn ' +
          `(§5: "standard single-turn inference without ODT feedback"); max turns must be 1, got ${maxTurns}`,
      );
    }
    return { ...PROGRESS_EVAL_CONFIG };
  }
  return maxTurns === undefined ? undefined : { maxTurns };
}

/**
 * The evaluation mode of a run: the dataset's (spider test-suite rules, or BIRD's), except that Progress-SQL scores
 * BIRD with OmniSQL's scripts (App. B, "Evaluation Setup"): BIRD's rules with OmniSQL's 10 s limit.
 */
function benchEvalMode(dataset: Dataset['name'], protocol: ProtocolName): EvalModeName {
  const mode = evalModeOf(dataset);
  return protocol === 'progress' && mode === 'bird' ? 'omnisql' : mode;
}

export async function runBenchmark(opts: BenchOptions): Promise<BenchReport & { testSuite?: TestSuiteSummary }> {
  const k = opts.samples ?? 1;
  const jobs = opts.jobs ?? 1;
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`samples must be a positive integer, got ${k}`);
  if (!Number.isInteger(jobs) || jobs < 1) throw new RangeError(`jobs must be a positive integer, got ${jobs}`);
  const config = benchProtocolConfig(opts.protocol, opts.maxTurns);
  const votePool = opts.votePool ?? defaultVotePool(opts.protocol);
  const vote = voteInfo(k, votePool, opts.votePool === undefined);
  const voters = voterSamples(k, votePool);
  const perQuestion = episodesPerQuestion(k, votePool);
  const temperature = opts.temperature ?? 1;
  const tasks = opts.limit === undefined ? opts.dataset.tasks : opts.dataset.tasks.slice(0, opts.limit);
  const mode = evalMode(benchEvalMode(opts.dataset.name, opts.protocol));
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  let runId: string = randomUUID();
  // Ctrl-C (the caller's signal) and a run of failures both stop the run the same way.
  const stop = new AbortController();
  let stopped: BenchReport['stopped'] = null;
  const onOuter = () => {
    stopped ??= 'cancelled';
    stop.abort();
  };
  if (opts.signal?.aborted) onOuter();
  opts.signal?.addEventListener('abort', onOuter, { once: true });
  const maxErrors = opts.maxConsecutiveErrors ?? 10;
  let errorRun = 0;

  ensureDir(opts.outDir);
  const trajPath = join(opts.outDir, BENCH_FILES.trajectories);
  const resumed = opts.resume
    ? await loadResumable(trajPath, {
        datasetFile: opts.dataset.file,
        model: opts.model.spec,
        protocol: opts.protocol,
        maxTurns: config?.maxTurns ?? null,
        temperature,
        config: config?.feedback === undefined ? undefined : { feedback: config.feedback },
      })
    : new Map<string, TrajectoryRecord>();
  // Samples of one question share a groupId across resumptions; the run id is the first run's.
  const groupOf = new Map<string, string>();
  for (const r of resumed.values()) {
    if (r.task.id !== null) groupOf.set(r.task.id, r.groupId);
    if (typeof r.meta.bench === 'string') runId = r.meta.bench;
  }
  const writer = await TrajectoryWriter.open(trajPath, { append: opts.resume === true });
  const pool = opts.pool ?? createSqlPool({ size: Math.max(1, Math.min(jobs, cpus().length)) });
  const states: QuestionState[] = tasks.map((task) => ({
    task,
    finals: new Array(perQuestion).fill(null),
    pending: perQuestion,
    cancelled: false,
  }));
  const stats = new AgentStatsAccumulator();
  let resumedEpisodes = 0;
  const errors: string[] = [];
  const scoring: Promise<void>[] = [];
  const scores: QuestionScore[] = [];
  const progress: BenchProgress = {
    episodesDone: 0,
    episodes: tasks.length * perQuestion,
    questionsScored: 0,
    questions: tasks.length,
    greedyCorrect: 0,
  };
  const report = () => {
    try {
      opts.onProgress?.({ ...progress });
    } catch {
      /* a display failure must not stop the run */
    }
  };
  const noteError = (msg: string) => {
    if (errors.length < 20) errors.push(msg);
  };
  const ctx = {
    mode,
    dbDir: opts.dataset.dbDir,
    timeoutMs: opts.evalTimeoutMs ?? mode.defaultTimeoutMs,
    pool,
    exact: exactMatcher(opts.dataset.name, opts.dataset.file),
  };
  const suiteCtx = opts.testSuite ? { ...ctx, mode: testSuiteMode(mode), dbDir: opts.testSuite } : undefined;
  const suiteStats = { singleGreedy: 0, misses: 0, singleMs: 0, suiteMs: 0 };
  /** The question's score (over its suite when there is one: then its single-database verdict is counted too). */
  const score = async (st: QuestionState): Promise<QuestionScore> => {
    const started = performance.now();
    const single = await scoreQuestion(st.task, st.finals, ctx, voters);
    if (!suiteCtx) return single;
    const t1 = performance.now();
    const suite = await scoreQuestion(st.task, st.finals, suiteCtx, voters);
    suiteStats.singleMs += t1 - started;
    suiteStats.suiteMs += performance.now() - t1;
    if (single.greedy) suiteStats.singleGreedy++;
    if (single.greedy && !suite.greedy) suiteStats.misses++;
    return suite;
  };

  const finishSample = (st: QuestionState) => {
    progress.episodesDone++;
    if (--st.pending === 0 && !st.cancelled) {
      scoring.push(
        score(st).then(
          (s) => {
            scores.push(s);
            progress.questionsScored++;
            if (s.greedy) progress.greedyCorrect++;
            report();
          },
          (err) => noteError(`${st.task.id}: scoring failed: ${(err as Error).message}`),
        ),
      );
    }
    report();
  };

  const runOne = async (st: QuestionState, sample: number) => {
    const sampling: SamplingOptions = sample === 0 ? { temperature: 0 } : { temperature, seed: sample };
    if (opts.maxTokens !== undefined) sampling.maxTokens = opts.maxTokens;
    const groupId = groupOf.get(st.task.id) ?? `${runId}:${st.task.id}`;
    try {
      const record = await runEpisode({
        task: st.task,
        protocolName: opts.protocol,
        model: opts.model,
        pool,
        sampling,
        signal: stop.signal,
        config,
        modelTimeoutMs: opts.modelTimeoutMs,
        groupId,
        sample,
        id: `${groupId}:${sample}`,
        meta: {
          bench: runId,
          dataset: opts.dataset.name,
          datasetFile: opts.dataset.file,
          index: st.task.index,
          level: st.task.level,
        },
      });
      if (record.end === 'cancelled') {
        st.cancelled = true;
        return;
      }
      st.finals[sample] = record.finalSql;
      stats.add(record);
      if (record.end === 'error') {
        noteError(`${st.task.id} sample ${sample}: ${record.error ?? 'the episode failed'}`);
        if (++errorRun >= maxErrors && !stop.signal.aborted) {
          stopped = 'errors';
          errors.push(
            `stopped after ${errorRun} episodes in a row failed; the last: ${record.error ?? 'unknown error'}`,
          );
          stop.abort();
        }
      } else errorRun = 0;
      await writer
        .write(record)
        .catch((err) => noteError(`${st.task.id} sample ${sample}: trajectory not written: ${(err as Error).message}`));
    } catch (err) {
      if (!(err instanceof EpisodeSetupError)) throw err;
      // The episode could not start (unusable database…): the sample has no answer and scores wrong.
      noteError(`${st.task.id} sample ${sample}: ${err.message}`);
    }
  };

  try {
    const units: [QuestionState, number][] = [];
    for (const st of states) {
      for (let sample = 0; sample < perQuestion; sample++) {
        const done = resumed.get(unitKey(st.task.id, sample));
        if (!done) {
          units.push([st, sample]);
          continue;
        }
        st.finals[sample] = done.finalSql;
        stats.add(done);
        resumedEpisodes++;
        finishSample(st);
      }
    }
    resumed.clear(); // their answers are in the question states now
    let next = 0;
    const worker = async () => {
      while (next < units.length && !stop.signal.aborted) {
        const [st, sample] = units[next++];
        await runOne(st, sample);
        finishSample(st);
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, units.length) }, worker));
    await Promise.all(scoring);
  } finally {
    opts.signal?.removeEventListener('abort', onOuter);
    await writer.close();
    if (!opts.pool) await pool.close();
  }

  scores.sort((a, b) => a.index - b.index);
  const scoredTasks = new Map(tasks.map((t) => [t.index, t]));
  writeFileSync(join(opts.outDir, BENCH_FILES.predictions), scores.map((s) => s.samples[0].prediction + '\n').join(''));
  writeFileSync(
    join(opts.outDir, BENCH_FILES.gold),
    scores.map((s) => `${goldLine(scoredTasks.get(s.index)!)}\t${s.dbId}\n`).join(''),
  );
  const levels = levelTable(scores, opts.dataset.levels, voters.length > 0);
  const conversational = opts.dataset.name === 'sparc' || opts.dataset.name === 'cosql';
  const result: BenchReport & { testSuite?: TestSuiteSummary } = {
    schema: 'quarry.bench/1',
    items: scores.length,
    planned: tasks.length,
    complete: scores.length === tasks.length,
    stopped,
    resumedEpisodes,
    samples: k,
    vote,
    dataset: { name: opts.dataset.name, file: opts.dataset.file, dbDir: opts.dataset.dbDir },
    skipped: opts.dataset.skipped ?? [],
    mode: mode.name,
    model: opts.model.spec,
    protocol: {
      name: opts.protocol,
      maxTurns: config?.maxTurns ?? null,
      ...(config?.feedback !== undefined ? { feedback: String(config.feedback) } : {}),
    },
    sampling: { greedy: { temperature: 0 }, others: perQuestion > 1 ? { temperature } : null },
    ex: { greedy: levels.all.greedy, majority: levels.all.majority, passAtK: levels.all.passAtK },
    em: exactMatchRates(scores),
    byHardness: levels,
    ...(conversational
      ? { interactions: interactionEx(scores, turnsPerInteraction(opts.dataset.tasks), voters.length > 0) }
      : {}),
    ...stats.result(),
    errors,
    warnings: goldWarnings(scores),
    timings: { totalMs: performance.now() - t0, startedAt },
    ...(opts.testSuite
      ? {
          testSuite: {
            dir: opts.testSuite,
            singleDatabaseGreedy: scores.length ? suiteStats.singleGreedy / scores.length : 0,
            turnedIntoMisses: suiteStats.misses,
            scoringMsPerItem: {
              singleDatabase: scores.length ? suiteStats.singleMs / scores.length : 0,
              testSuite: scores.length ? suiteStats.suiteMs / scores.length : 0,
            },
          },
        }
      : {}),
    questions: scores,
  };
  writeFileSync(join(opts.outDir, BENCH_FILES.report), JSON.stringify(result, null, 1) + '\n');
  return result;
}

/** Turns of each interaction in the dataset: an interaction --limit cuts short is left out of interaction scores. */
function turnsPerInteraction(tasks: DatasetTask[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const t of tasks) if (t.interaction !== undefined) out.set(t.interaction, (out.get(t.interaction) ?? 0) + 1);
  return out;
}
