// `quarry serve-env`: Quarry's environment and reward panels over HTTP/1.1 + JSON, for trainers on other machines
// or in other languages (verl, SkyRL, TRL through quarry_trainer). Every route runs the same code as the CLI: episodes
// are SqlAgentEnv, /v1/reward is `quarry reward --json`, /v1/execute a `quarry exec-batch` record, /v1/odt
// `quarry odt --json`. Databases only from the --db-dir roots; bodies capped; a bearer token when one is configured
// (and required off loopback). A failing request never stops the server.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createSqlPool, type SqlPool } from '../../core/db/pool';
import { DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_MS } from '../../core/db/limits';
import { execRecord } from '../../core/db/execRecord';
import { observationFormat } from '../../core/db/execOptions';
import { createScoringResources } from '../../core/rewards/resources';
import { loadPanel } from '../../core/rewards/panelFile';
import { scorePanelDetailed } from '../../core/rewards/engine';
import { panelJson } from '../../core/rewards/render';
import { parseDifficulty } from '../../core/rewards/difficulty';
import { EVAL_MODES, type EvalModeName } from '../../core/eval/modes';
import { compareOdt } from '../../core/rewards/odt';
import { odtJson } from '../../core/rewards/odt/json';
import { introspectSchema } from '../../core/db/schema/introspect';
import { validateTrajectory } from '../../core/trajectories/validate';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import type { ResolvedPanel, ScoringResources } from '../../core/rewards/types';
import { BUILTIN_PANEL_NAMES } from '../../core/rewards/builtins';
import { DatabaseRoots } from './databases';
import { EpisodeStore } from './episodes';
import { ServiceError } from './errors';
import { openApi } from './openapi';

export const ENV_SERVICE_VERSION = 1;

export interface EnvServerOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  dbDirs: readonly string[];
  /** Bearer token every request must carry; required when host is not loopback. */
  token?: string | null;
  /** SQL workers. Default 2. */
  jobs?: number;
  /** Largest request body, bytes. Default 16 MiB. */
  maxBodyBytes?: number;
  maxEpisodes?: number;
  idleMs?: number;
  /** Items in one batch request. Default 1024. */
  maxBatch?: number;
  /** Statement limit for rewards, ms. Default 30 s. */
  rewardTimeoutMs?: number;
  cwd?: string;
  version?: string;
}

export interface EnvServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export async function startEnvServer(opts: EnvServerOptions): Promise<EnvServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host) && !opts.token) {
    throw new Error(
      `refusing to listen on ${host} without a token: anyone who can reach it could run SQL on your ` +
        `databases (give --token-file, or bind 127.0.0.1 and tunnel)`,
    );
  }
  const roots = new DatabaseRoots(opts.dbDirs);
  const pool = createSqlPool({ size: opts.jobs ?? 2 });
  const resources = createScoringResources({ run: pool, timeoutMs: opts.rewardTimeoutMs ?? 30_000 });
  const cwd = opts.cwd ?? process.cwd();
  const episodes = new EpisodeStore({ pool, resources, maxEpisodes: opts.maxEpisodes, idleMs: opts.idleMs, cwd });
  const ctx: Ctx = {
    roots,
    pool,
    resources,
    episodes,
    cwd,
    maxBatch: opts.maxBatch ?? 1024,
    version: opts.version ?? 'dev',
  };
  const maxBody = opts.maxBodyBytes ?? 16 * 2 ** 20;
  const token = opts.token ? Buffer.from(opts.token) : null;

  const server = createServer((req, res) => {
    handle(req, res, ctx, maxBody, token).catch((err: unknown) => {
      const e =
        err instanceof ServiceError ? err : new ServiceError('internal', (err as Error)?.message ?? String(err));
      send(res, e.status, e.toJSON());
    });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown}:${addr.port}`,
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
  resources: ScoringResources;
  episodes: EpisodeStore;
  cwd: string;
  maxBatch: number;
  version: string;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

function authorized(req: IncomingMessage, token: Buffer | null): boolean {
  if (!token) return true;
  const h = req.headers.authorization ?? '';
  const m = /^Bearer (.+)$/.exec(h);
  if (!m) return false;
  const given = Buffer.from(m[1]);
  return given.length === token.length && timingSafeEqual(given, token);
}

async function readBody(req: IncomingMessage, max: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max) {
    req.resume();
    throw new ServiceError('too-large', `the body is ${declared} bytes; the most is ${max}`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) {
      req.resume();
      throw new ServiceError('too-large', `the body is over ${max} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') throw new ServiceError('bad-json', 'the request has no body; send a JSON object');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError('bad-json', `the body is not JSON: ${(err as Error).message}`);
  }
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  ctx: Ctx,
  maxBody: number,
  token: Buffer | null,
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://x');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  const method = req.method ?? 'GET';
  if (path === '/v1/health' && method === 'GET')
    return send(res, 200, {
      ok: true,
      version: ctx.version,
      service: ENV_SERVICE_VERSION,
      episodes: ctx.episodes.size,
    });
  if (!authorized(req, token))
    throw new ServiceError(
      'unauthorized',
      'this server needs "Authorization: Bearer <token>" (the token of its --token-file)',
    );
  if (path === '/v1/openapi.json' && method === 'GET') return send(res, 200, openApi(ctx.version));

  const episode = /^\/v1\/episodes\/([^/]+)(\/step)?$/.exec(path);
  if (path === '/v1/episodes' && method === 'POST')
    return send(res, 200, await batch(await readBody(req, maxBody), ctx, createEpisode));
  if (episode?.[2] && method === 'POST') {
    const body = obj(await readBody(req, maxBody));
    if (typeof body.action !== 'string')
      throw new ServiceError('bad-request', '"action" must be the model\'s turn as a string');
    return send(res, 200, await ctx.episodes.step(decodeURIComponent(episode[1]), body.action));
  }
  if (episode && !episode[2] && method === 'DELETE') {
    const ended = ctx.episodes.end(decodeURIComponent(episode[1]));
    if (!ended) throw new ServiceError('not-found', `no episode ${episode[1]}`);
    return send(res, 200, { ended: true });
  }
  if (episode && !episode[2] && method === 'GET')
    return send(res, 200, ctx.episodes.record(decodeURIComponent(episode[1])));
  if (path === '/v1/reward' && method === 'POST')
    return send(res, 200, await batch(await readBody(req, maxBody), ctx, reward));
  if (path === '/v1/execute' && method === 'POST')
    return send(res, 200, await batch(await readBody(req, maxBody), ctx, execute));
  if (path === '/v1/odt' && method === 'POST')
    return send(res, 200, await batch(await readBody(req, maxBody), ctx, odt));
  throw new ServiceError('not-found', `no route ${method} ${path} (see GET /v1/openapi.json)`);
}

/** A JSON array is a batch: each item answered in order, a failing item as its error object. */
async function batch(
  body: unknown,
  ctx: Ctx,
  one: (b: Record<string, unknown>, ctx: Ctx) => Promise<unknown>,
): Promise<unknown> {
  if (!Array.isArray(body)) return one(obj(body), ctx);
  if (body.length > ctx.maxBatch)
    throw new ServiceError('too-large', `${body.length} items in one batch; the most is ${ctx.maxBatch}`);
  return Promise.all(
    body.map(async (item) => {
      try {
        return await one(obj(item), ctx);
      } catch (err) {
        if (err instanceof ServiceError && err.kind !== 'internal') return err.toJSON();
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

function posInt(b: Record<string, unknown>, key: string): number | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new ServiceError('bad-request', `"${key}" must be a positive integer`);
  return v;
}

async function createEpisode(b: Record<string, unknown>, ctx: Ctx): Promise<unknown> {
  const db = ctx.roots.resolve(b.db);
  const history = b.history;
  if (
    history !== undefined &&
    (!Array.isArray(history) || history.some((h) => !h || typeof h.question !== 'string' || typeof h.sql !== 'string'))
  ) {
    throw new ServiceError('bad-request', '"history" must be a list of {question, sql, result?}');
  }
  return ctx.episodes.create({
    protocol: str(b, 'protocol', true),
    dbPath: db.path,
    dbId: db.id,
    question: str(b, 'question', true),
    maxTurns: posInt(b, 'maxTurns'),
    evidence: str(b, 'evidence'),
    history: history as Array<{ question: string; sql: string; result?: string }> | undefined,
    goldSql: str(b, 'goldSql'),
    panel: str(b, 'panel'),
  });
}

/** Built-in panels are resolved once; a panel file is read each time (it may be edited between requests). */
const builtinPanels = new Map<string, ResolvedPanel>();

function panelFor(name: string, cwd: string): ResolvedPanel {
  const cached = builtinPanels.get(name);
  if (cached) return cached;
  let panel: ResolvedPanel;
  try {
    panel = loadPanel(name, cwd);
  } catch (err) {
    throw new ServiceError('bad-request', (err as Error).message);
  }
  if (BUILTIN_PANEL_NAMES.includes(name)) builtinPanels.set(name, panel);
  return panel;
}

async function reward(b: Record<string, unknown>, ctx: Ctx): Promise<unknown> {
  const panel = panelFor(str(b, 'panel', true), ctx.cwd);
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
  const result = await scorePanelDetailed(
    panel,
    {
      goldSql,
      dbPath: db.path,
      trajectory,
      predSql: predSql ?? null,
      difficulty,
      mode: mode as EvalModeName | undefined,
      turnBudget: posInt(b, 'turnBudget'),
    },
    ctx.resources,
  );
  return panelJson(result);
}

async function execute(b: Record<string, unknown>, ctx: Ctx): Promise<unknown> {
  const db = ctx.roots.resolve(b.db);
  const sql = str(b, 'sql', true);
  let format;
  try {
    format = observationFormat(str(b, 'format'));
  } catch (err) {
    throw new ServiceError('bad-request', (err as Error).message);
  }
  const r = await ctx.pool.exec({
    db: db.path,
    sql,
    timeoutMs: posInt(b, 'timeoutMs') ?? DEFAULT_TIMEOUT_MS,
    maxRows: posInt(b, 'maxRows') ?? DEFAULT_MAX_ROWS,
  });
  return execRecord(b.id ?? null, r, format);
}

async function odt(b: Record<string, unknown>, ctx: Ctx): Promise<unknown> {
  const pred = str(b, 'pred', true);
  const gold = str(b, 'gold', true);
  let schema;
  if (b.db !== undefined) {
    const db = ctx.roots.resolve(b.db);
    try {
      schema = introspectSchema(db.path, { sampleRows: 0, countRows: false });
    } catch (err) {
      throw new ServiceError('bad-request', `cannot read the schema of ${String(b.db)}: ${(err as Error).message}`);
    }
  }
  return odtJson(compareOdt(pred, gold, { schema }));
}
