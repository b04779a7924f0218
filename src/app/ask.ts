// Asking a question, the one way the CLI (`quarry ask`), the Ask panel and `@quarry` all do it: the conversation so
// far decides the protocol (follow-ups keep the conversation's) and the task with its memory; the episode runs; its
// trajectory is saved by the one save policy (trajectoryStore.ts); the final SQL is run for the result shown. Nothing
// here throws after setup: a failed save or final run is in the outcome.
import { runEpisode, type EpisodeEvent } from '../core/agent/loop';
import { nextTask, protocolForNext, type Exchange } from '../core/agent/conversation';
import type { ProtocolConfig, ProtocolName, Task } from '../core/agent/types';
import { withHistoryResults } from '../core/agent/protocols/mtsqlr1/historyResults';
import type { SqlPool } from '../core/db/pool';
import type { ExecResult } from '../core/db/types';
import { DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_MS } from '../core/db/limits';
import type { ChatModel, SamplingOptions } from '../core/models/types';
import type { TrajectoryRecord } from '../core/trajectories/types';
import { appendTrajectory } from './trajectoryStore';

interface AskRequest {
  question: string;
  dbPath: string;
  /** The conversation so far about this database, oldest first. */
  exchanges?: readonly Exchange[];
  /** The protocol for a first question (follow-ups keep the one the conversation started with). */
  protocol: ProtocolName;
  config?: Partial<ProtocolConfig>;
  model: ChatModel;
  pool: SqlPool;
  sampling?: SamplingOptions;
  signal?: AbortSignal;
  modelTimeoutMs?: number;
  /** Limit of the final SQL's run and of the memory's SQL, ms. */
  queryTimeoutMs?: number;
  /** Rows of the final result to keep. */
  resultRows?: number;
  /** Whether to run the final SQL (the Ask panel runs it itself, to show progress). Default true. */
  runFinal?: boolean;
  /** The trajectory file to append the episode to, or null when saving is off. */
  saveTo: string | null;
  meta?: Record<string, unknown>;
  onEvent?: (event: EpisodeEvent) => void;
}

interface AskOutcome {
  record: TrajectoryRecord;
  /** The final SQL's result; null when there was none, it was not run, or the question was cancelled. */
  final: ExecResult | null;
  /** Where the trajectory was appended (null when saving is off or it failed). */
  savedTo: string | null;
  /** Why saving failed, when it did. */
  saveError: string | null;
}

/**
 * Runs one question. Rejects only with EpisodeSetupError (bad database, protocol or task) or an AbortError before it
 * starts.
 */
export async function ask(req: AskRequest): Promise<AskOutcome> {
  const exchanges = req.exchanges ?? [];
  const task = await withResults(nextTask(req.question, req.dbPath, exchanges), req);
  const record = await runEpisode({
    task,
    protocolName: protocolForNext(exchanges, req.protocol),
    config: req.config,
    model: req.model,
    pool: req.pool,
    sampling: req.sampling,
    signal: req.signal,
    modelTimeoutMs: req.modelTimeoutMs,
    meta: req.meta,
    onEvent: req.onEvent,
  });
  let savedTo: string | null = null;
  let saveError: string | null = null;
  if (req.saveTo !== null) {
    try {
      await appendTrajectory(record, req.saveTo);
      savedTo = req.saveTo;
    } catch (err) {
      saveError = `the trajectory could not be saved to ${req.saveTo}: ${(err as Error).message}`;
    }
  }
  let final: ExecResult | null = null;
  if (record.finalSql !== null && req.runFinal !== false && !req.signal?.aborted) {
    final = await runFinalSql(req.pool, req.dbPath, record.finalSql, {
      timeoutMs: req.queryTimeoutMs ?? timeoutOf(record),
      maxRows: req.resultRows ?? DEFAULT_MAX_ROWS,
      signal: req.signal,
    });
  }
  return { record, final, savedTo, saveError };
}

/**
 * The task with every earlier SQL's result filled (the memory quotes them): the callers pass the results they showed;
 * any missing one is run here. A failure leaves the entry without one (the memory then says it was not run).
 */
async function withResults(task: Task, req: AskRequest): Promise<Task> {
  if (!task.history?.some((h) => h.result === undefined)) return task;
  try {
    return await withHistoryResults(task, req.pool, { signal: req.signal, timeoutMs: req.queryTimeoutMs });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    return task;
  }
}

/** Runs a final SQL for display; a sandbox failure is an error result, a cancellation null. */
export async function runFinalSql(
  pool: SqlPool,
  dbPath: string,
  sql: string,
  opts: { timeoutMs?: number; maxRows?: number; signal?: AbortSignal },
): Promise<ExecResult | null> {
  try {
    return await pool.exec(
      { db: dbPath, sql, timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS, maxRows: opts.maxRows ?? DEFAULT_MAX_ROWS },
      opts.signal,
    );
  } catch (err) {
    if ((err as Error).name === 'AbortError') return null;
    return {
      ok: false,
      errorClass: 'sql',
      error: (err as Error).message,
      columns: [],
      rows: [],
      rowCount: 0,
      truncated: false,
      ms: 0,
    };
  }
}

function timeoutOf(record: TrajectoryRecord): number {
  const t = record.protocol.config.timeoutMs;
  return typeof t === 'number' && t > 0 ? t : DEFAULT_TIMEOUT_MS;
}
