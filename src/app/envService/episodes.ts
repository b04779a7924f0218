// Episodes served to a trainer (verl, SkyRL, TRL) one step at a time, skyrl-gym style: create → opening messages;
// step(the model's raw turn) → observation, done, and when done with a known gold the reward of the recipe's panel,
// scored on the trajectory record the episode built — the same record and panel the editor and `quarry score` use.
// Episodes are bounded in number and expire when idle; a step whose client disconnects is cancelled and ends its
// episode.
import { randomUUID } from 'node:crypto';
import { SqlAgentEnv, SchemaCache } from '../../core/agent/env';
import { getProtocol, isProtocolName, PROTOCOL_NAMES } from '../../core/agent/protocols';
import { recordAction, recordExec } from '../../core/agent/loop';
import { odtFeedback } from '../../core/agent/feedback';
import type { ProtocolConfig } from '../../core/agent/types';
import type { SqlPool } from '../../core/db/pool';
import type { ExecResult } from '../../core/db/types';
import { dbSha256 } from '../../core/trajectories/dbHash';
import { TRAJECTORY_SCHEMA, type TrajectoryRecord, type TrajectoryTurn } from '../../core/trajectories/types';
import { defaultPanelFor } from '../../core/trajectories/summary';
import { scorePanelDetailed } from '../../core/rewards/engine';
import { computeVerdict } from '../../core/rewards/verdict';
import { evalMode } from '../../core/eval/modes';
import { panelJson } from '../../core/rewards/render';
import type { ResolvedPanel } from '../../core/rewards/types';
import { ServiceError } from './errors';
import type { PanelSource } from './panels';
import type { SharedScoring } from './cancel';
import type { TestSuite } from '../../core/rewards/testSuite';
import { suiteCheckOf } from '../../core/rewards/engine';
import type { SuiteCheck } from '../../core/rewards/types';
import { suiteOrRefuse } from './suites';

interface CreateEpisode {
  protocol: string;
  /** Resolved database path (the server checks it is inside its roots). */
  dbPath: string;
  dbId: string | null;
  question: string;
  maxTurns?: number;
  evidence?: string;
  history?: Array<{ question: string; sql: string; result?: string }>;
  goldSql?: string;
  /** A built-in panel name or a panel file; default the protocol's own. */
  panel?: string;
}

interface StepReply {
  /** The text the environment answers with (joined when a protocol sends several), or null when it says nothing. */
  observation: string | null;
  done: boolean;
  /** Where the next generation should stop (the protocol's stop strings; SQL-Trail's final call narrows them). */
  stop: string[];
  /** The panel total, when done and the gold is known; else null. */
  reward: number | null;
  /** The panel's terms ({name: contribution}), when reward is set. */
  terms: Record<string, number> | null;
  info: {
    turn: number;
    turnsLeft: number;
    action: TrajectoryTurn['action'];
    exec: TrajectoryTurn['exec'];
    end: TrajectoryRecord['end'] | null;
    finalSql: string | null;
    /**
     * Whether the final SQL's result equals the gold's (the panel's `exec.match` term passed), when done with a known
     * gold and a panel that has that term; else null. Trainers count pass@G and EX with it.
     */
    ex?: boolean | null;
    /** The full panel result (what `quarry reward --json` prints) when reward is set. */
    panel?: unknown;
    /** When the answer was checked over a test suite: on how many databases, and which one disagreed. */
    testSuite?: SuiteCheck;
  };
}

interface Live {
  env: SqlAgentEnv;
  record: TrajectoryRecord;
  panel: ResolvedPanel | null;
  lastUsed: number;
  busy: boolean;
}

interface EpisodeStoreOptions {
  pool: SqlPool;
  /** The scoring resources rewards share (a step's own view cancels with its client). */
  scoring: SharedScoring;
  /** The panels clients may name. */
  panels: PanelSource;
  /** The operator's test suite (--test-suite), or null: execution terms check over it as each panel allows. */
  suite?: TestSuite | null;
  /** Episodes alive at once; more is a 429. Default 1024. */
  maxEpisodes?: number;
  /** An episode untouched this long is dropped. Default 10 min. */
  idleMs?: number;
}

export class EpisodeStore {
  private readonly live = new Map<string, Live>();
  private readonly schemaCache = new SchemaCache();
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxEpisodes: number;
  private readonly idleMs: number;

  constructor(private readonly opts: EpisodeStoreOptions) {
    this.maxEpisodes = opts.maxEpisodes ?? 1024;
    this.idleMs = opts.idleMs ?? 10 * 60_000;
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.idleMs, 30_000));
    this.sweeper.unref();
  }

  get size(): number {
    return this.live.size;
  }

  async create(
    req: CreateEpisode,
    signal?: AbortSignal,
  ): Promise<{ id: string; messages: Array<{ role: string; content: string }>; stop: string[] }> {
    if (!isProtocolName(req.protocol)) {
      throw new ServiceError(
        'bad-request',
        `unknown protocol '${req.protocol}'; valid protocols: ${PROTOCOL_NAMES.join(', ')}`,
      );
    }
    this.sweep();
    if (this.live.size >= this.maxEpisodes) {
      throw new ServiceError(
        'too-many',
        `${this.live.size} episodes are open (the most is ${this.maxEpisodes}); end some (DELETE) or wait ` +
          `for idle ones to expire`,
      );
    }
    const protocol = getProtocol(req.protocol);
    if (protocol.needsOracle && !req.goldSql) {
      throw new ServiceError(
        'bad-request',
        `the ${req.protocol} protocol needs "goldSql" (its feedback is computed from the gold)`,
      );
    }
    let panel: ResolvedPanel | null = null;
    if (req.goldSql) {
      panel = await this.opts.panels.load(req.panel ?? defaultPanelFor(req.protocol));
      // A panel that requires a test suite this server cannot give for the database is refused before the episode.
      suiteOrRefuse(panel, { goldSql: req.goldSql, dbPath: req.dbPath, dbId: req.dbId, testSuite: this.opts.suite });
    }
    const config: Partial<ProtocolConfig> = req.maxTurns === undefined ? {} : { maxTurns: req.maxTurns };
    const task = {
      question: req.question,
      dbPath: req.dbPath,
      dbId: req.dbId ?? undefined,
      evidence: req.evidence,
      history: req.history,
      gold: req.goldSql,
    };
    const prepared = protocol.prepareTask ? await protocol.prepareTask(task, { pool: this.opts.pool, signal }) : task;
    let env: SqlAgentEnv;
    let messages;
    try {
      env = new SqlAgentEnv({
        task: prepared,
        protocol,
        config,
        pool: this.opts.pool,
        schemaCache: this.schemaCache,
        feedback: odtFeedback,
      });
      await env.prepare();
      messages = env.reset();
    } catch (err) {
      throw new ServiceError('bad-request', `cannot start the episode: ${(err as Error).message}`);
    }
    const id = randomUUID();
    const record: TrajectoryRecord = {
      schema: TRAJECTORY_SCHEMA,
      id,
      groupId: id,
      sample: 0,
      createdAt: new Date().toISOString(),
      task: {
        id: null,
        question: req.question,
        db: { path: req.dbPath, id: req.dbId, sha256: await dbSha256(req.dbPath) },
        evidence: req.evidence ?? null,
        history: prepared.history ?? [],
        gold: req.goldSql ?? null,
        difficulty: null,
      },
      protocol: { name: protocol.name, config: { ...env.config }, budget: env.budget },
      model: { spec: 'external:serve-env', sampling: {} },
      prompt: messages.map((m) => ({ ...m })),
      turns: [],
      finalSql: null,
      end: 'error',
      error: null,
      usage: { promptTokens: 0, completionTokens: 0 },
      timings: { totalMs: 0, modelMs: 0, envMs: 0 },
      meta: { source: 'serve-env' },
    };
    this.live.set(id, { env, record, panel, lastUsed: Date.now(), busy: false });
    return { id, messages: messages.map((m) => ({ role: m.role, content: m.content })), stop: env.session.stop() };
  }

  async step(id: string, action: string, signal?: AbortSignal): Promise<StepReply> {
    const e = this.live.get(id);
    if (!e) throw new ServiceError('not-found', `no episode ${id} (it ended, expired or never existed)`);
    if (e.busy)
      throw new ServiceError(
        'bad-request',
        `episode ${id} is already taking a step: send the next one after its reply`,
      );
    e.busy = true;
    e.lastUsed = Date.now();
    const started = performance.now();
    try {
      const session = e.env.session;
      const assistant = session.restoreStop(action, null, 'stop');
      const step = await e.env.step(assistant, { signal });
      const envMs = performance.now() - started;
      const turn: TrajectoryTurn = {
        index: e.record.turns.length,
        assistant,
        action: recordAction(step.action),
        observations: step.observations,
        exec: step.exec ? recordExec(step.exec as ExecResult) : null,
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
        timings: { modelMs: 0, envMs },
      };
      e.record.turns.push(turn);
      e.record.timings.envMs += envMs;
      const reply: StepReply = {
        observation: step.observations.length ? step.observations.map((o) => o.content).join('\n') : null,
        done: step.done,
        stop: step.done ? [] : session.stop(),
        reward: null,
        terms: null,
        info: {
          turn: turn.index,
          turnsLeft: step.turnsLeft,
          action: turn.action,
          exec: turn.exec,
          end: step.end,
          finalSql: step.finalSql,
        },
      };
      if (step.done) {
        e.record.end = step.end ?? 'answer';
        e.record.finalSql = step.finalSql;
        this.live.delete(id);
        const input = {
          goldSql: e.record.task.gold ?? '',
          dbPath: e.record.task.db.path,
          trajectory: e.record,
          testSuite: this.opts.suite,
          dbId: e.record.task.db.id,
        };
        const suite = e.panel && e.record.task.gold ? suiteOrRefuse(e.panel, input) : undefined;
        const resources = this.opts.scoring.view([e.record.task.db.path, ...(suite?.files ?? [])], signal);
        if (e.panel && e.record.task.gold) {
          const result = await scorePanelDetailed(e.panel, input, resources);
          reply.reward = result.total;
          reply.terms = Object.fromEntries(result.terms.map((t) => [t.name, t.contribution]));
          reply.info.panel = panelJson(result);
          const checked = suiteCheckOf(result);
          if (checked) reply.info.testSuite = checked;
          // EX: the panel's own exec.match verdict when it ran; else (no such term, or gated by a failed format) the
          // evaluator's verdict on the final SQL, so pass@G means the same under every panel.
          const match = e.panel.terms.findIndex((t) => t.term === 'exec.match');
          const detail = match >= 0 ? result.details[match] : undefined;
          const ran = detail?.passed !== undefined && !String(detail.failure ?? '').startsWith('gated:');
          reply.info.ex = ran
            ? (detail?.passed ?? null)
            : (
                await computeVerdict(
                  e.record.finalSql,
                  e.record.task.gold,
                  e.record.task.db.path,
                  evalMode(e.panel.mode),
                  resources,
                  suite,
                )
              ).correct;
        }
      }
      return reply;
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      // Its client went: the turn was not taken to its end, so the episode cannot go on.
      if (signal?.aborted) this.live.delete(id);
      throw new ServiceError('internal', `the step failed: ${(err as Error).message}`);
    } finally {
      e.busy = false;
    }
  }

  /** The episode's trajectory so far (for a trainer that logs it). */
  record(id: string): TrajectoryRecord {
    const e = this.live.get(id);
    if (!e) throw new ServiceError('not-found', `no episode ${id}`);
    return e.record;
  }

  end(id: string): boolean {
    return this.live.delete(id);
  }

  close(): void {
    clearInterval(this.sweeper);
    this.live.clear();
  }

  private sweep(): void {
    const cutoff = Date.now() - this.idleMs;
    for (const [id, e] of this.live) if (!e.busy && e.lastUsed < cutoff) this.live.delete(id);
  }
}
