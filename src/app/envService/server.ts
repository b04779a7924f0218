// `quarry serve-env`: Quarry's environment and reward panels over HTTP/1.1 + JSON, for trainers on other machines
// or in other languages (verl, SkyRL, TRL through quarry_trainer). Every route runs the same code as the CLI: episodes
// are SqlAgentEnv, /v1/reward is `quarry reward --json`, /v1/execute a `quarry exec-batch` record, /v1/odt
// `quarry odt --json`. Databases only from the --db-dir roots, panel files only from the --panel-dir folders; bodies,
// text fields, batches and every client-given limit capped (limits.ts); Host, Origin and Content-Type checked
// (requestChecks.ts); a bearer token when one is configured (and required off loopback); a client that disconnects
// cancels its statements; answers never name the server's absolute paths. A failing request never stops the server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { sep } from 'node:path';
import { createSqlPool, type SqlPool } from '../../core/db/pool';
import { DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_MS } from '../../core/db/limits';
import { execRecord } from '../../core/db/execRecord';
import { observationFormat } from '../../core/db/execOptions';
import { DEFAULT_REWARD_TIMEOUT_MS } from '../../core/rewards/resources';
import { scorePanelDetailed } from '../../core/rewards/engine';
import { panelJson } from '../../core/rewards/render';
import { parseDifficulty } from '../../core/rewards/difficulty';
import { EVAL_MODES, type EvalModeName } from '../../core/eval/modes';
import { compareOdt } from '../../core/rewards/odt';
import { odtJson } from '../../core/rewards/odt/json';
import { introspectViaPool } from '../../core/db/schema/viaPool';
import { validateTrajectory } from '../../core/trajectories/validate';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { DatabaseRoots } from './databases';
import { TestSuite } from '../../core/rewards/testSuite';
import { suiteCheckOf } from '../../core/rewards/engine';
import { suiteOrRefuse } from './suites';
import { EpisodeStore } from './episodes';
import { ServiceError } from './errors';
import { openApi } from './openapi';
import { PanelSource } from './panels';
import { SharedScoring } from './cancel';
import { capped, DEFAULT_LIMITS, InFlight, type ServiceLimits } from './limits';
import { authorized, checkRequest, type HostRule, isLoopback, listenWithHostRule } from './requestChecks';

const ENV_SERVICE_VERSION = 1;

interface EnvServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  dbDirs: readonly string[];
  /** Folders whose panel files (.json) clients may name; none by default (built-in panels only). */
  panelDirs?: readonly string[];
  /** More Host names the server answers to (NAME or NAME:PORT), besides its loopback names and bound address. */
  allowHosts?: readonly string[];
  /** Bearer token every request must carry; required when host is not loopback. */
  token?: string | null;
  /** SQL workers. Default 2. */
  jobs?: number;
  /** Largest request body, bytes. Default 16 MiB. */
  maxBodyBytes?: number;
  maxEpisodes?: number;
  idleMs?: number;
  /** Items in one batch request. Default 1024 (same as limits.maxBatch; the latter wins when both are given). */
  maxBatch?: number;
  /** Statement limit for rewards, ms. Default 30 s, never above limits.maxTimeoutMs. */
  rewardTimeoutMs?: number;
  /**
   * A test-suite folder (--test-suite TSDIR): the panels' execution terms check answers over TSDIR/<db_id>/*.sqlite
   * as each panel allows. Only the operator names it; requests and panel files cannot.
   */
  testSuite?: string;
  /** The maxima client-given limits are held to (DEFAULT_LIMITS where not given). */
  limits?: Partial<ServiceLimits>;
  /** Open connections at once; more are refused. Default 1024. */
  maxConnections?: number;
  version?: string;
}

export interface EnvServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startEnvServer(opts: EnvServerOptions): Promise<EnvServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host) && !opts.token) {
    throw new Error(
      `refusing to listen on ${host} without a token: anyone who can reach it could run SQL on your ` +
        `databases (give --token-file, or bind 127.0.0.1 and tunnel)`,
    );
  }
  const limits: ServiceLimits = {
    ...DEFAULT_LIMITS,
    ...(opts.maxBatch ? { maxBatch: opts.maxBatch } : {}),
    ...opts.limits,
  };
  const roots = new DatabaseRoots(opts.dbDirs);
  const suite = opts.testSuite === undefined ? null : new TestSuite(opts.testSuite);
  const panels = new PanelSource(opts.panelDirs ?? [], limits.maxPanelBytes);
  await panels.check();
  const pool = createSqlPool({ size: opts.jobs ?? 2 });
  const scoring = new SharedScoring(
    pool,
    Math.min(opts.rewardTimeoutMs ?? DEFAULT_REWARD_TIMEOUT_MS, limits.maxTimeoutMs),
  );
  const episodes = new EpisodeStore({
    pool,
    scoring,
    panels,
    suite,
    maxEpisodes: opts.maxEpisodes,
    idleMs: opts.idleMs,
  });
  const ctx: Ctx = {
    roots,
    pool,
    scoring,
    panels,
    suite,
    episodes,
    limits,
    inFlight: new InFlight(limits.maxInFlight),
    ...pathScrubbers(
      [
        ...opts.dbDirs,
        ...roots.list,
        ...(opts.panelDirs ?? []),
        ...(opts.testSuite && suite ? [opts.testSuite, suite.root] : []),
      ],
      process.cwd(),
    ),
    version: opts.version ?? 'dev',
  };
  const maxBody = opts.maxBodyBytes ?? 16 * 2 ** 20;
  const token = opts.token ? Buffer.from(opts.token) : null;
  let hosts: HostRule | undefined;

  const server = createServer((req, res) => {
    // A client that goes before its answer is sent cancels what its request still runs (statements, a step).
    const gone = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    handle(req, res, ctx, { maxBody, token, hosts: hosts!, signal: gone.signal }).catch((err: unknown) => {
      const e =
        err instanceof ServiceError ? err : new ServiceError('internal', (err as Error)?.message ?? String(err));
      send(res, e.status, errorJson(e, ctx), ctx);
    });
  });
  server.keepAliveTimeout = 65_000;
  server.maxConnections = opts.maxConnections ?? 1024;
  const bound = await listenWithHostRule(server, host, opts.port ?? 0, opts.allowHosts ?? [], token !== null);
  hosts = bound.hosts;
  return {
    url: bound.origin,
    server,
    async close() {
      episodes.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}

interface Ctx {
  roots: DatabaseRoots;
  pool: SqlPool;
  scoring: SharedScoring;
  panels: PanelSource;
  /** The operator's test suite (--test-suite), or null. */
  suite: TestSuite | null;
  episodes: EpisodeStore;
  limits: ServiceLimits;
  inFlight: InFlight;
  /** An answer's text with the --db-dir and --panel-dir folders taken out of the paths in it. */
  unroot: (text: string) => string;
  /** An error message with every absolute path of the server's taken out. */
  scrub: (message: string) => string;
  version: string;
}

/** What one request carries besides its body: its connection's abort signal and the server's checks. */
interface Req {
  maxBody: number;
  token: Buffer | null;
  hosts: HostRule;
  signal: AbortSignal;
}

/**
 * unroot: the paths in an answer made relative to the folder of them they lie in (a db id, a panel name); every answer
 * goes through it, so a reward's explanation or a failed statement's observation names a database as a client does.
 * scrub: for error messages, also the working folder, and anything else that looks like an absolute path becomes
 * <path>.
 */
function pathScrubbers(
  folders: readonly string[],
  cwd: string,
): { unroot: (text: string) => string; scrub: (message: string) => string } {
  const relativeTo = (dirs: string[]) => {
    const longestFirst = [...new Set(dirs.filter((d) => d.length > 1))].sort((a, b) => b.length - a.length);
    return (text: string) => {
      let t = text;
      for (const d of longestFirst) if (t.includes(d)) t = t.replaceAll(d + sep, '').replaceAll(d, '.');
      return t;
    };
  };
  const unroot = relativeTo([...folders]);
  const all = relativeTo([...folders, cwd]);
  return {
    unroot,
    scrub: (message) => all(message).replace(/(?<![\w.~-])\/(?:[\w.@+~-]+\/)+[\w.@+~-]*/g, '<path>'),
  };
}

function errorJson(e: ServiceError, ctx: Ctx): ReturnType<ServiceError['toJSON']> {
  const j = e.toJSON();
  return { error: { kind: j.error.kind, message: ctx.scrub(j.error.message) } };
}

function send(res: ServerResponse, status: number, body: unknown, ctx: Ctx): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const text = ctx.unroot(JSON.stringify(body));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** The body parsed as JSON, refused past `max` bytes or with a text field over `maxChars` (also for `quarry mcp`). */
export async function readBody(req: IncomingMessage, max: number, maxChars: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    throw new ServiceError('too-large', `the body is ${declared} bytes; the most is ${max}`);
  }
  const text = await bodyText(req, max);
  if (text.trim() === '') throw new ServiceError('bad-json', 'the request has no body; send a JSON object');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ServiceError('bad-json', `the body is not JSON: ${(err as Error).message}`);
  }
  if (longestText(body) > maxChars)
    throw new ServiceError('too-large', `a text field of the body is over ${maxChars} characters`);
  return body;
}

/**
 * The body as UTF-8 text, refused once it passes `max` bytes (the rest is drained, unread). Read with 'data' events,
 * not an async iterator: this runs for every request, and the iterator costs more than the small bodies it reads.
 */
function bodyText(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err: Error | null) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        done(new ServiceError('too-large', `the body is over ${max} bytes`));
        req.resume();
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(null);
    const onError = (err: Error) => done(err);
    const onClose = () => done(new Error('the client closed the connection before its body was read'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The longest string anywhere in a parsed JSON value (keys included), walked without recursion. */
function longestText(value: unknown): number {
  let longest = 0;
  const todo: unknown[] = [value];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === 'string') longest = Math.max(longest, v.length);
    else if (Array.isArray(v)) todo.push(...v);
    else if (v && typeof v === 'object')
      for (const [k, x] of Object.entries(v)) {
        longest = Math.max(longest, k.length);
        todo.push(x);
      }
  }
  return longest;
}

/** A path segment's %-escapes decoded; a malformed one is the client's error. */
function segment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ServiceError('bad-request', 'the episode id in the path has a malformed %-escape');
  }
}

/**
 * The request's path without trailing slashes. A plain path (letters, digits, `/`, `_`, `-` only, not starting `//`: no
 * `.` segment, `%`, `\\`, query or host for the URL parser to rewrite) is its own pathname, and skips the parser.
 */
export function pathOf(raw: string): string {
  const pathname = /^\/(?!\/)[\w/-]*$/.test(raw) ? raw : new URL(raw, 'http://x').pathname;
  return pathname.replace(/\/+$/, '') || '/';
}

const BODY_ROUTES = new Set(['/v1/episodes', '/v1/reward', '/v1/execute', '/v1/odt']);

async function handle(req: IncomingMessage, res: ServerResponse, ctx: Ctx, r: Req): Promise<void> {
  const path = pathOf(req.url ?? '/');
  const method = req.method ?? 'GET';
  const episode = /^\/v1\/episodes\/([^/]+)(\/step)?$/.exec(path);
  const hasBody = method === 'POST' && (BODY_ROUTES.has(path) || Boolean(episode?.[2]));
  checkRequest(req, r.hosts, hasBody);
  const ok = (body: unknown) => send(res, 200, body, ctx);
  if (path === '/v1/health' && method === 'GET')
    return ok({
      ok: true,
      version: ctx.version,
      service: ENV_SERVICE_VERSION,
      episodes: ctx.episodes.size,
      inFlight: ctx.inFlight.count,
    });
  if (!authorized(req, r.token))
    throw new ServiceError(
      'unauthorized',
      'this server needs "Authorization: Bearer <token>" (the token of its --token-file)',
    );
  if (path === '/v1/openapi.json' && method === 'GET') return ok(openApi(ctx.version));

  const body = () => readBody(req, r.maxBody, ctx.limits.maxFieldChars);
  const many = (one: (b: Record<string, unknown>, ctx: Ctx, signal: AbortSignal) => Promise<unknown>) => async () => {
    const b = await body();
    const items = Array.isArray(b) ? b.length : 1;
    return ok(await ctx.inFlight.admit(items, () => batch(b, ctx, r.signal, one)));
  };
  if (path === '/v1/episodes' && method === 'POST') return many(createEpisode)();
  if (episode?.[2] && method === 'POST') {
    const id = segment(episode[1]);
    const b = obj(await body());
    const action = str(b, 'action', true);
    return ok(await ctx.inFlight.admit(1, () => ctx.episodes.step(id, action, r.signal)));
  }
  if (episode && !episode[2] && method === 'DELETE') {
    const id = segment(episode[1]);
    if (!ctx.episodes.end(id)) throw new ServiceError('not-found', `no episode ${id}`);
    return ok({ ended: true });
  }
  // The record names its database relative to its --db-dir folder (unroot), the form /v1/reward takes back.
  if (episode && !episode[2] && method === 'GET') return ok(ctx.episodes.record(segment(episode[1])));
  if (path === '/v1/reward' && method === 'POST') return many(reward)();
  if (path === '/v1/execute' && method === 'POST') return many(execute)();
  if (path === '/v1/odt' && method === 'POST') return many(odt)();
  throw new ServiceError('not-found', `no route ${method} ${path} (see GET /v1/openapi.json)`);
}

/** A JSON array is a batch: each item answered in order, a failing item as its error object. */
async function batch(
  body: unknown,
  ctx: Ctx,
  signal: AbortSignal,
  one: (b: Record<string, unknown>, ctx: Ctx, signal: AbortSignal) => Promise<unknown>,
): Promise<unknown> {
  if (!Array.isArray(body)) return one(obj(body), ctx, signal);
  if (body.length > ctx.limits.maxBatch)
    throw new ServiceError('too-large', `${body.length} items in one batch; the most is ${ctx.limits.maxBatch}`);
  return Promise.all(
    body.map(async (item) => {
      try {
        return await one(obj(item), ctx, signal);
      } catch (err) {
        if (err instanceof ServiceError && err.kind !== 'internal') return errorJson(err, ctx);
        throw err;
      }
    }),
  );
}

function obj(v: unknown): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ServiceError('bad-request', 'expected a JSON object');
  return v as Record<string, unknown>;
}

function str(b: Record<string, unknown>, key: string, required: true): string;
function str(b: Record<string, unknown>, key: string, required?: false): string | undefined;
function str(b: Record<string, unknown>, key: string, required = false): string | undefined {
  const v = b[key];
  if (v === undefined || v === null) {
    if (required) throw new ServiceError('bad-request', `"${key}" is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new ServiceError('bad-request', `"${key}" must be a string`);
  return v;
}

async function createEpisode(b: Record<string, unknown>, ctx: Ctx, signal: AbortSignal): Promise<unknown> {
  const db = ctx.roots.resolve(b.db);
  const history = b.history;
  if (
    history !== undefined &&
    (!Array.isArray(history) ||
      history.some(
        (h) =>
          !h ||
          typeof h.question !== 'string' ||
          typeof h.sql !== 'string' ||
          (h.result !== undefined && typeof h.result !== 'string'),
      ))
  ) {
    throw new ServiceError('bad-request', '"history" must be a list of {question, sql, result?}');
  }
  if (Array.isArray(history) && history.length > ctx.limits.maxTurns)
    throw new ServiceError('too-large', `"history" has ${history.length} items; the most is ${ctx.limits.maxTurns}`);
  return ctx.episodes.create(
    {
      protocol: str(b, 'protocol', true),
      dbPath: db.path,
      dbId: db.id,
      question: str(b, 'question', true),
      maxTurns: capped(b.maxTurns, 'maxTurns', ctx.limits.maxTurns),
      evidence: str(b, 'evidence'),
      history: history as Array<{ question: string; sql: string; result?: string }> | undefined,
      goldSql: str(b, 'goldSql'),
      panel: str(b, 'panel'),
    },
    signal,
  );
}

async function reward(b: Record<string, unknown>, ctx: Ctx, signal: AbortSignal): Promise<unknown> {
  const panel = await ctx.panels.load(str(b, 'panel', true));
  const mode = str(b, 'mode');
  if (mode !== undefined && !EVAL_MODES.includes(mode as EvalModeName))
    throw new ServiceError('bad-request', `"mode" must be one of ${EVAL_MODES.join(', ')}`);
  let trajectory: TrajectoryRecord | null = null;
  if (b.trajectory !== undefined) {
    const problem = validateTrajectory(b.trajectory);
    if (problem)
      throw new ServiceError(
        'bad-request',
        `"trajectory" is not a valid record: ${problem.field || '(record)'}: ${problem.message}`,
      );
    trajectory = b.trajectory as TrajectoryRecord;
    // A final call may follow the last budgeted turn.
    if (trajectory.turns.length > ctx.limits.maxTurns + 1)
      throw new ServiceError(
        'too-large',
        `"trajectory" has ${trajectory.turns.length} turns; the most is ${ctx.limits.maxTurns + 1}`,
      );
  }
  const predSql = str(b, 'predSql');
  if ((predSql === undefined) === (trajectory === null))
    throw new ServiceError('bad-request', 'give exactly one of "predSql" and "trajectory"');
  const goldSql = str(b, 'goldSql') ?? trajectory?.task.gold ?? undefined;
  if (!goldSql) throw new ServiceError('bad-request', '"goldSql" is required (the trajectory records no gold)');
  const db = ctx.roots.resolve(b.db ?? trajectory?.task.db.id ?? trajectory?.task.db.path);
  const difficultyText = str(b, 'difficulty');
  const difficulty = difficultyText === undefined ? undefined : parseDifficulty(difficultyText);
  if (difficultyText !== undefined && !difficulty)
    throw new ServiceError('bad-request', '"difficulty" must be simple, medium, hard or extra');
  const input = {
    goldSql,
    dbPath: db.path,
    trajectory,
    predSql: predSql ?? null,
    difficulty,
    mode: mode as EvalModeName | undefined,
    turnBudget: capped(b.turnBudget, 'turnBudget', ctx.limits.maxTurns),
    testSuite: ctx.suite,
    dbId: db.id,
  };
  const suite = suiteOrRefuse(panel, input);
  const result = await scorePanelDetailed(panel, input, ctx.scoring.view([db.path, ...(suite?.files ?? [])], signal));
  const checked = suiteCheckOf(result);
  return { ...panelJson(result), ...(checked ? { testSuite: checked } : {}) };
}

async function execute(b: Record<string, unknown>, ctx: Ctx, signal: AbortSignal): Promise<unknown> {
  const db = ctx.roots.resolve(b.db);
  const sql = str(b, 'sql', true);
  const id = b.id ?? null;
  if (id !== null && typeof id !== 'string' && typeof id !== 'number')
    throw new ServiceError('bad-request', '"id" must be a string or a number');
  let format;
  try {
    format = observationFormat(str(b, 'format'));
  } catch (err) {
    throw new ServiceError('bad-request', (err as Error).message);
  }
  const r = await ctx.pool.exec(
    {
      db: db.path,
      sql,
      timeoutMs: capped(b.timeoutMs, 'timeoutMs', ctx.limits.maxTimeoutMs, DEFAULT_TIMEOUT_MS),
      maxRows: capped(b.maxRows, 'maxRows', ctx.limits.maxRows, DEFAULT_MAX_ROWS),
    },
    signal,
  );
  const record = execRecord(id, r, format);
  if (record.ok) return record;
  // A failure may name the database file (it cannot be opened, it is not SQLite…): by its id, not the server's path.
  return { ...record, error: record.error && ctx.scrub(record.error), observation: ctx.scrub(record.observation) };
}

async function odt(b: Record<string, unknown>, ctx: Ctx): Promise<unknown> {
  const pred = str(b, 'pred', true);
  const gold = str(b, 'gold', true);
  let schema;
  if (b.db !== undefined) {
    const db = ctx.roots.resolve(b.db);
    try {
      // Read in the SQL workers, time-limited, not in the server's own thread.
      schema = await introspectViaPool(ctx.pool, db.path, {
        sampleRows: 0,
        countRows: false,
        timeoutMs: ctx.limits.maxTimeoutMs,
      });
    } catch (err) {
      throw new ServiceError('bad-request', `cannot read the schema of ${String(b.db)}: ${(err as Error).message}`);
    }
  }
  return odtJson(compareOdt(pred, gold, { schema }));
}
