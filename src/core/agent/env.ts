// The text-to-SQL environment, skyrl-gym style: reset() gives the opening messages, step(text) parses one assistant
// turn, runs the SQL it asks for in the sandbox pool and returns what the model sees next. The same env serves the
// editor, the CLI, benchmarks and RL rollouts, so it does no I/O of its own beyond the pool and the schema cache.
import { statSync } from 'node:fs';
import type { ChatMessage } from '../models/types';
import type { ExecResult } from '../db/types';
import type { SqlPool } from '../db/pool';
import { DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_MS } from '../db/limits';
import { introspectSchema } from '../db/schema/introspect';
import { introspectViaPool } from '../db/schema/viaPool';
import { assertSqliteFile } from '../db/open';
import type { SchemaInfo } from '../db/schema/types';
import type { FeedbackSource, Protocol, ProtocolSession } from './protocol';
import type { ParsedAction, ProtocolConfig, StepResult, Task } from './types';
import { turnBudget } from './budget';
import { appendObservation } from './history';

/** Introspects each database once, and again only when its file changes (size or modification time). */
export class SchemaCache {
  private readonly entries = new Map<string, { stamp: string; schema: SchemaInfo }>();

  constructor(private readonly capacity = 256) {}

  /**
   * The schema of `dbPath`, read through the sandbox pool: every introspection query runs in a killable worker with a
   * time limit (a row count past its budget reads as unknown), so a database whose view never ends cannot hang the
   * caller. Rejects with DatabaseOpenError when the file is not a usable database.
   */
  async load(dbPath: string, pool: SqlPool): Promise<SchemaInfo> {
    const stamp = this.stampOf(dbPath);
    const hit = this.fresh(dbPath, stamp);
    if (hit) return hit;
    return this.store(dbPath, stamp, await introspectViaPool(pool, dbPath));
  }

  /** The schema of `dbPath` read in this thread (no time limit: for callers without a pool; load() is preferred). */
  get(dbPath: string): SchemaInfo {
    const stamp = this.stampOf(dbPath);
    return this.fresh(dbPath, stamp) ?? this.store(dbPath, stamp, introspectSchema(dbPath));
  }

  private stampOf(dbPath: string): string {
    let st;
    try {
      st = statSync(dbPath);
    } catch (err) {
      assertSqliteFile(dbPath); // throws the DatabaseOpenError that says what is wrong with the path
      throw err;
    }
    return `${st.mtimeMs}:${st.size}`;
  }

  private fresh(dbPath: string, stamp: string): SchemaInfo | undefined {
    const hit = this.entries.get(dbPath);
    if (!hit || hit.stamp !== stamp) return undefined;
    // Re-inserting keeps the Map in least-recently-used order for eviction.
    this.entries.delete(dbPath);
    this.entries.set(dbPath, hit);
    return hit.schema;
  }

  private store(dbPath: string, stamp: string, schema: SchemaInfo): SchemaInfo {
    this.entries.delete(dbPath);
    this.entries.set(dbPath, { stamp, schema });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return schema;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Shared by every env that is not given its own cache, so a benchmark or rollout introspects each database once. */
const defaultSchemaCache = new SchemaCache();

interface SqlAgentEnvOptions {
  task: Task;
  protocol: Protocol;
  /** Overrides of the protocol's defaults; `timeoutMs` and `maxRows` cap each statement the model runs. */
  config?: Partial<ProtocolConfig>;
  pool: SqlPool;
  schemaCache?: SchemaCache;
  /** The schema, when the caller already has it (skips the cache). */
  schema?: SchemaInfo;
  feedback?: FeedbackSource;
}

interface StepMeta {
  /** Aborting cancels the statement in flight (its worker is killed); step() then rejects with an AbortError. */
  signal?: AbortSignal;
  /** Called with the parsed action before any SQL runs, so a UI can show the query while it executes. */
  onAction?: (action: ParsedAction) => void;
}

/** Thrown by step() when the environment itself fails (not the model's SQL: that is an observation). */
export class EnvError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EnvError';
  }
}

type Phase = 'idle' | 'running' | 'final' | 'done';

export class SqlAgentEnv {
  readonly task: Task;
  readonly protocol: Protocol;
  /** The protocol's defaults with the caller's overrides applied. */
  readonly config: ProtocolConfig;
  /** Assistant turns allowed (fixed, or SQL-Trail's adaptive budget by difficulty). */
  readonly budget: number;
  private readonly pool: SqlPool;
  private readonly schemaCache: SchemaCache;
  private readonly feedback?: FeedbackSource;
  private schemaInfo: SchemaInfo | undefined;
  private sessionState: ProtocolSession | null = null;
  private history: ChatMessage[] = [];
  private turns = 0;
  private phase: Phase = 'idle';

  constructor(opts: SqlAgentEnvOptions) {
    this.task = opts.task;
    this.protocol = opts.protocol;
    this.config = { ...opts.protocol.defaults, ...definedOnly(opts.config ?? {}) } as ProtocolConfig;
    if (!Number.isInteger(this.config.maxTurns) || this.config.maxTurns < 1) {
      throw new EnvError(`maxTurns must be a positive integer, got ${String(this.config.maxTurns)}`);
    }
    this.budget = turnBudget(opts.protocol.name, this.config, opts.task);
    this.pool = opts.pool;
    this.schemaCache = opts.schemaCache ?? defaultSchemaCache;
    this.schemaInfo = opts.schema;
    this.feedback = opts.feedback;
  }

  /** The database's schema: the one prepare() loaded through the pool, else introspected here on first use. */
  get schema(): SchemaInfo {
    this.schemaInfo ??= this.schemaCache.get(this.task.dbPath);
    return this.schemaInfo;
  }

  /** Loads the schema through the sandbox pool (time-limited, killable); the agent loop calls it before reset(). */
  async prepare(): Promise<void> {
    this.schemaInfo ??= await this.schemaCache.load(this.task.dbPath, this.pool);
  }

  /** The protocol session of the current episode (stop strings, restoreStop); reset() must have been called. */
  get session(): ProtocolSession {
    if (!this.sessionState) throw new EnvError('the environment has not been reset');
    return this.sessionState;
  }

  /** Starts a new episode and returns its opening messages. */
  reset(): ChatMessage[] {
    this.sessionState = this.protocol.create({
      task: this.task,
      config: this.config,
      schema: this.schema,
      feedback: this.feedback,
    });
    const opening = this.sessionState.start();
    this.history = opening.map((m) => ({ ...m }));
    this.turns = 0;
    this.phase = 'running';
    return opening;
  }

  /** The whole conversation so far: opening messages, assistant turns and observations. */
  messages(): ChatMessage[] {
    return this.history.slice();
  }

  /** Assistant turns taken so far (the final-call generation included). */
  get turnsTaken(): number {
    return this.turns;
  }

  get done(): boolean {
    return this.phase === 'done';
  }

  /** True when the budget is spent and the next generation is the protocol's one last chance to answer. */
  get inFinalCall(): boolean {
    return this.phase === 'final';
  }

  /** Turns the model still has (0 during the final call). */
  get turnsLeft(): number {
    return Math.max(0, this.budget - this.turns);
  }

  /** Carries out one assistant turn. */
  async step(assistantText: string, meta: StepMeta = {}): Promise<StepResult> {
    if (this.phase === 'idle') throw new EnvError('the environment has not been reset');
    if (this.phase === 'done') throw new EnvError('the episode is over; call reset() to start another');
    const session = this.session;
    const finalCall = this.phase === 'final';
    const action = session.parse(assistantText);
    meta.onAction?.(action);
    this.turns++;
    this.history.push({ role: 'assistant', content: assistantText });

    if (finalCall) {
      // The one last generation after the budget (SQL-Trail Algorithm 1, lines 31-32): an answer or nothing.
      const answered = action.kind === 'answer' && action.sql !== null;
      return this.finish({
        action,
        observations: [],
        exec: null,
        done: true,
        end: answered ? 'answer' : 'budget',
        finalSql: answered ? action.sql : null,
        turnsLeft: 0,
      });
    }

    const exec = action.kind === 'execute' && action.sql !== null ? await this.run(action.sql, meta.signal) : null;
    const turnsLeft = this.turnsLeft;
    const response = session.respond(action, exec, turnsLeft);
    if (response.done && response.end !== 'budget') {
      return this.finish({
        action,
        observations: response.observations,
        exec,
        done: true,
        end: response.end ?? 'answer',
        finalSql: response.finalSql,
        turnsLeft,
      });
    }
    if (turnsLeft > 0 && !response.done) {
      for (const o of response.observations) appendObservation(this.history, o);
      return { action, observations: response.observations, exec, done: false, end: null, finalSql: null, turnsLeft };
    }
    // Out of turns without an answer: one last generation when the protocol asks for it, else the episode ends.
    const last = session.finalCall();
    if (last) {
      const observations = last === 'history' ? [...response.observations] : [...response.observations, last];
      for (const o of observations) appendObservation(this.history, o);
      this.phase = 'final';
      return { action, observations, exec, done: false, end: null, finalSql: null, turnsLeft: 0 };
    }
    return this.finish({
      action,
      observations: response.observations,
      exec,
      done: true,
      end: 'budget',
      finalSql: response.finalSql,
      turnsLeft: 0,
    });
  }

  private finish(result: StepResult): StepResult {
    this.phase = 'done';
    for (const o of result.observations) appendObservation(this.history, o);
    return result;
  }

  private async run(sql: string, signal: AbortSignal | undefined): Promise<ExecResult> {
    try {
      return await this.pool.exec(
        { db: this.task.dbPath, sql, timeoutMs: this.execTimeoutMs, maxRows: this.execMaxRows },
        signal,
      );
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new EnvError(`the SQL sandbox failed: ${(err as Error).message}`);
    }
  }

  get execTimeoutMs(): number {
    return positiveNumber(this.config.timeoutMs) ?? DEFAULT_TIMEOUT_MS;
  }

  get execMaxRows(): number {
    return positiveNumber(this.config.maxRows) ?? DEFAULT_MAX_ROWS;
  }
}

function positiveNumber(v: unknown): number | undefined {
  return typeof v === 'number' && v > 0 ? v : undefined;
}

/** Drops keys whose value is undefined, so `{maxTurns: undefined}` keeps the protocol's default. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
