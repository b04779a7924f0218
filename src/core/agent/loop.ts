// The agent loop: drives a ChatModel through a SqlAgentEnv until the episode ends, streams what happens as events
// (for the CLI and the editor) and returns the whole episode as a TrajectoryRecord. Everything that can go wrong
// after setup — model errors, timeouts, sandbox failures, cancellation — ends up in the record, never as a rejection.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import type { ChatMessage, ChatModel, GenerateResult, SamplingOptions, TokenUsage } from '../models/types';
import { ModelError } from '../models/types';
import type { ExecResult } from '../db/types';
import type { SqlPool } from '../db/pool';
import type { FeedbackSource, Protocol, ProtocolSession } from './protocol';
import type { EpisodeEnd, Observation, ParsedAction, ProtocolConfig, ProtocolName, Task } from './types';
import { getProtocol } from './protocols';
import { SqlAgentEnv, type SchemaCache } from './env';
import { DatabaseOpenError } from '../db/open';
import { dbSha256 } from '../trajectories/dbHash';
import { TRAJECTORY_SCHEMA, type TrajectoryRecord, type TrajectoryTurn, type TurnExec } from '../trajectories/types';

/** What the loop reports as it goes, in order, so a UI can show the episode live. */
export type EpisodeEvent =
  | { type: 'start'; id: string; protocol: ProtocolName; budget: number; prompt: ChatMessage[] }
  /** A generation begins; `finalCall` marks the one last generation after the budget. */
  | { type: 'turn'; index: number; turnsLeft: number; finalCall: boolean }
  /** Streamed text of the generation in progress (only from backends that stream). */
  | { type: 'text'; index: number; delta: string }
  /** The whole assistant turn (stop string restored) and what the protocol made of it, before any SQL runs. */
  | { type: 'action'; index: number; assistant: string; action: ParsedAction }
  | { type: 'exec'; index: number; sql: string; result: ExecResult }
  | { type: 'observation'; index: number; observations: Observation[] }
  | { type: 'done'; record: TrajectoryRecord };

export interface RunEpisodeOptions {
  task: Task;
  /** The protocol module, or its name (looked up in the registry). */
  protocol?: Protocol;
  protocolName?: ProtocolName | string;
  /** Overrides of the protocol's defaults (maxTurns, adaptive, timeoutMs, maxRows, …). */
  config?: Partial<ProtocolConfig>;
  model: ChatModel;
  pool: SqlPool;
  /** Sampling for every generation; the protocol's stop strings are added to `stop`. */
  sampling?: SamplingOptions;
  /** Cancels the episode at any point; the record then ends 'cancelled' with the turns completed so far. */
  signal?: AbortSignal;
  /** Wall-clock limit of each model call, ms. */
  modelTimeoutMs?: number;
  onEvent?: (event: EpisodeEvent) => void;
  groupId?: string;
  sample?: number;
  meta?: Record<string, unknown>;
  /** Trajectory id; a random UUID by default. */
  id?: string;
  schemaCache?: SchemaCache;
  feedback?: FeedbackSource;
}

/** Bad input found before the episode could start (unknown protocol, unusable database, bad config). */
export class EpisodeSetupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EpisodeSetupError';
  }
}

/** Runs one episode. Rejects only with EpisodeSetupError; every later failure is recorded in the trajectory. */
export async function runEpisode(opts: RunEpisodeOptions): Promise<TrajectoryRecord> {
  const started = performance.now();
  const createdAt = new Date().toISOString();
  const id = opts.id ?? randomUUID();
  const protocol = resolveProtocol(opts);
  const { env, task, prompt } = await startEnv({ ...opts, protocol });
  const sha256 = await databaseSha256(task.dbPath);
  const emit = listener(opts.onEvent);
  emit({ type: 'start', id, protocol: env.protocol.name, budget: env.budget, prompt });

  const turns: TrajectoryTurn[] = [];
  const usage: TokenUsage = { promptTokens: 0, completionTokens: 0 };
  let modelMs = 0;
  let envMs = 0;
  let end = null as EpisodeEnd | null;
  let finalSql: string | null = null;
  let error: string | null = null;

  try {
    while (end === null) {
      if (opts.signal?.aborted) {
        end = 'cancelled';
        break;
      }
      const index = turns.length;
      const session = env.session;
      emit({ type: 'turn', index, turnsLeft: env.turnsLeft, finalCall: env.inFinalCall });

      const t0 = performance.now();
      let result: GenerateResult;
      try {
        result = await generate(opts, {
          messages: env.messages(),
          sampling: { ...opts.sampling, stop: [...new Set([...(opts.sampling?.stop ?? []), ...session.stop()])] },
          onText: (delta) => emit({ type: 'text', index, delta }),
        });
      } catch (err) {
        modelMs += performance.now() - t0;
        if (opts.signal?.aborted) end = 'cancelled';
        else {
          end = 'error';
          error = describeModelFailure(err);
        }
        break;
      }
      const callMs = performance.now() - t0;
      modelMs += callMs;
      usage.promptTokens += result.usage.promptTokens;
      usage.completionTokens += result.usage.completionTokens;
      if (result.finishReason === 'abort' || result.finishReason === 'error') {
        if (opts.signal?.aborted) end = 'cancelled';
        else {
          end = 'error';
          error = `the model stopped generating with finish reason '${result.finishReason}'`;
        }
        break;
      }

      const assistant = session.restoreStop(result.text, result.stopString, result.finishReason);
      const e0 = performance.now();
      let action: ParsedAction | null = null;
      const turn = (observations: Observation[], exec: ExecResult | null): TrajectoryTurn => ({
        index,
        assistant,
        action: recordAction(action ?? safeParse(session, assistant)),
        observations,
        exec: exec && recordExec(exec),
        finishReason: result.finishReason,
        usage: { ...result.usage },
        ...(result.usageEstimated ? { usageEstimated: true } : {}),
        ...(result.overLong ? { overLong: true } : {}),
        timings: { modelMs: callMs, envMs: performance.now() - e0 },
      });
      try {
        const step = await env.step(assistant, {
          signal: opts.signal,
          onAction: (a) => {
            action = a;
            emit({ type: 'action', index, assistant, action: a });
          },
        });
        const t = turn(step.observations, step.exec);
        envMs += t.timings.envMs;
        turns.push(t);
        if (step.exec && step.action.sql !== null)
          emit({ type: 'exec', index, sql: step.action.sql, result: step.exec });
        if (step.observations.length) emit({ type: 'observation', index, observations: step.observations });
        if (step.done) {
          end = step.end ?? 'answer';
          finalSql = step.finalSql;
        }
      } catch (err) {
        // The model's turn is real even when its SQL never finished: keep it, without an execution.
        const t = turn([], null);
        envMs += t.timings.envMs;
        turns.push(t);
        if ((err as Error).name === 'AbortError' || opts.signal?.aborted) end = 'cancelled';
        else {
          end = 'error';
          error = (err as Error).message;
        }
      }
    }
  } catch (err) {
    // Protocol code is not supposed to throw; if it does, the episode still ends with a record that says so.
    end = 'error';
    error = `internal error: ${(err as Error)?.message ?? String(err)}`;
  }

  const record: TrajectoryRecord = {
    schema: TRAJECTORY_SCHEMA,
    id,
    groupId: opts.groupId ?? id,
    sample: opts.sample ?? 0,
    createdAt,
    task: {
      id: task.id ?? null,
      question: task.question,
      db: { path: task.dbPath, id: task.dbId ?? null, sha256 },
      evidence: task.evidence ?? null,
      history: (task.history ?? []).map((h) =>
        h.result === undefined
          ? { question: h.question, sql: h.sql }
          : { question: h.question, sql: h.sql, result: h.result },
      ),
      gold: task.gold ?? null,
      difficulty: task.difficulty ?? null,
    },
    protocol: { name: env.protocol.name, config: { ...env.config }, budget: env.budget },
    model: { spec: opts.model.spec, sampling: { ...opts.sampling } },
    prompt,
    turns,
    finalSql,
    end: end ?? 'error',
    error,
    usage,
    timings: { totalMs: performance.now() - started, modelMs, envMs },
    meta: { ...opts.meta },
  };
  emit({ type: 'done', record });
  return record;
}

function resolveProtocol(opts: RunEpisodeOptions): Protocol {
  try {
    return opts.protocol ?? getProtocol(opts.protocolName ?? 'skyrl');
  } catch (err) {
    throw new EpisodeSetupError((err as Error).message);
  }
}

interface StartEnvOptions {
  task: Task;
  protocol: Protocol;
  config?: Partial<ProtocolConfig>;
  pool: SqlPool;
  signal?: AbortSignal;
  schemaCache?: SchemaCache;
  feedback?: FeedbackSource;
}

/**
 * An environment reset for a new episode of `task`, as runEpisode starts one: the protocol completes the task
 * (MTSQL-R1 runs the history's SQL), the schema is loaded through the pool, and reset() gives the opening messages.
 * Rejects with EpisodeSetupError for bad input (unusable database, bad config, a task the protocol refuses).
 */
export async function startEnv(
  opts: StartEnvOptions,
): Promise<{ env: SqlAgentEnv; task: Task; prompt: ChatMessage[] }> {
  const { protocol } = opts;
  const given = { ...opts.task, dbPath: resolve(opts.task.dbPath) };
  const task = protocol.prepareTask
    ? await protocol.prepareTask(given, { pool: opts.pool, signal: opts.signal })
    : given;
  let env: SqlAgentEnv;
  try {
    env = new SqlAgentEnv({
      task,
      protocol,
      config: opts.config,
      pool: opts.pool,
      schemaCache: opts.schemaCache,
      feedback: opts.feedback,
    });
  } catch (err) {
    throw new EpisodeSetupError((err as Error).message);
  }
  try {
    await env.prepare(); // introspect now (through the pool), so an unusable database is a setup error
  } catch (err) {
    throw setupErrorFor(task.dbPath, err);
  }
  return { env, task, prompt: startEpisode(env) };
}

async function databaseSha256(dbPath: string): Promise<string> {
  try {
    return await dbSha256(dbPath);
  } catch (err) {
    throw setupErrorFor(dbPath, err);
  }
}

/** DatabaseOpenError already names the file; anything else gets the path in front. */
function setupErrorFor(dbPath: string, err: unknown): EpisodeSetupError {
  return new EpisodeSetupError(err instanceof DatabaseOpenError ? err.message : `${dbPath}: ${(err as Error).message}`);
}

/** reset() can refuse a task (progress without gold SQL or an oracle): that is bad input, said as such. */
function startEpisode(env: SqlAgentEnv): ChatMessage[] {
  try {
    return env.reset();
  } catch (err) {
    throw new EpisodeSetupError(`the ${env.protocol.name} protocol cannot start this task: ${(err as Error).message}`);
  }
}

interface ModelCall {
  messages: ChatMessage[];
  sampling: SamplingOptions;
  onText: (delta: string) => void;
}

/**
 * One model call under the episode's signal and the per-call timeout. The loop enforces both itself, so a backend
 * that ignores its signal or its own timeout cannot hang the episode.
 */
async function generate(opts: RunEpisodeOptions, call: ModelCall): Promise<GenerateResult> {
  const inner = new AbortController();
  const outer = opts.signal;
  const onOuter = () => inner.abort(outer?.reason);
  outer?.addEventListener('abort', onOuter, { once: true });
  // Aborted already (e.g. by an onEvent listener reacting to this turn's 'turn' event): no event will come.
  if (outer?.aborted) inner.abort(outer.reason);
  const limit = opts.modelTimeoutMs;
  let timer: NodeJS.Timeout | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const fail = () =>
      reject(outer?.aborted ? abortError() : new ModelError('timeout', `the model call timed out after ${limit} ms`));
    if (inner.signal.aborted) fail();
    inner.signal.addEventListener('abort', fail, { once: true });
    if (limit !== undefined && limit > 0 && limit <= 0x7fffffff) timer = setTimeout(() => inner.abort(), limit);
  });
  const call$ = opts.model.generate({ ...call, signal: inner.signal, timeoutMs: limit });
  // Whichever loses the race must not surface later as an unhandled rejection.
  call$.catch(() => {});
  stopped.catch(() => {});
  try {
    return await Promise.race([call$, stopped]);
  } finally {
    if (timer) clearTimeout(timer);
    outer?.removeEventListener('abort', onOuter);
    if (!inner.signal.aborted) inner.abort(); // frees a backend still holding the call (the race was lost)
  }
}

function abortError(): Error {
  const err = new Error('the episode was cancelled');
  err.name = 'AbortError';
  return err;
}

function describeModelFailure(err: unknown): string {
  if (err instanceof ModelError) return `model error (${err.kind}): ${err.message}`;
  if ((err as Error)?.name === 'AbortError') return 'the model call was aborted by the backend';
  return `model error: ${(err as Error)?.message ?? String(err)}`;
}

/** Listener failures are the listener's problem: they must not end the episode. */
function listener(onEvent: ((e: EpisodeEvent) => void) | undefined): (e: EpisodeEvent) => void {
  if (!onEvent) return () => {};
  return (e) => {
    try {
      onEvent(e);
    } catch {
      /* ignored on purpose */
    }
  };
}

/** Parsing never throws by contract; a protocol bug must still leave a well-formed record. */
function safeParse(session: ProtocolSession, text: string): ParsedAction {
  try {
    return session.parse(text);
  } catch (err) {
    return {
      kind: 'invalid',
      sql: null,
      thought: null,
      mdp: [],
      problems: [`the protocol failed to parse this turn: ${(err as Error).message}`],
    };
  }
}

export function recordAction(a: ParsedAction): TrajectoryTurn['action'] {
  const out: TrajectoryTurn['action'] = {
    kind: a.kind,
    sql: a.sql,
    thought: a.thought,
    mdp: [...a.mdp],
    problems: [...a.problems],
  };
  if (a.verify) out.verify = { ...a.verify };
  return out;
}

export function recordExec(r: ExecResult): TurnExec {
  return {
    ok: r.ok,
    errorClass: r.errorClass,
    error: r.error,
    columns: [...r.columns],
    rowCount: r.rowCount,
    truncated: r.truncated,
    ms: r.ms,
  };
}
