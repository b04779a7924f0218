// A real OpenAI-compatible chat-completions server on 127.0.0.1 that replays scripted answers. Tests, `quarry bench`
// checks and e2e runs talk to it over a real socket exactly as they would to vLLM: streaming (SSE) and not,
// /v1/models, stop strings applied server-side the vLLM way (text cut before the stop, finish_reason 'stop',
// `stop_reason` naming the string), max_tokens -> 'length', usage counts. Knobs make it fail, stall or misbehave.
//
// Tokens, for max_tokens and usage, are words with their leading whitespace (`/\s*\S+|\s+/g`): "SELECT a FROM t" is
// 4 tokens. Deterministic and close enough to a real tokenizer's order of magnitude for tests and benchmarks.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';

export type Match = string | RegExp | { regex: string; flags?: string };
export type WireRole = 'system' | 'user' | 'assistant' | 'tool';

/** One scripted answer. The first entry (in order) that fits a request answers it. */
export interface ReplayEntry {
  /**
   * Substring or regex tested against the conversation: the messages' contents (of `role`, if given) joined by '\n'.
   */
  match?: Match;
  role?: WireRole;
  /** Only for this assistant turn: the number of assistant messages already in the request (0 for the first answer). */
  turn?: number;
  /** Only for requests naming this model. */
  model?: string;
  /** The answer, every time this entry fits. */
  response?: string;
  /** Answers handed out one per fitting request, in order; once used up the entry fits nothing. */
  responses?: string[];
}

export interface ReplayScript {
  entries: ReplayEntry[];
  /** The answer when no entry fits; without one, such a request gets HTTP 400 naming the conversation. */
  default?: string;
  models?: string[];
}

export interface ReplayServerOptions {
  script?: ReplayEntry[] | ReplayScript;
  /** Model ids served (listed at /v1/models); a request naming another gets vLLM's 404. Default ['replay']. */
  models?: string[];
  /** Accept any model name, as llama.cpp's server does. */
  anyModel?: boolean;
  defaultResponse?: string;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, or get 401. */
  apiKey?: string;
  /** Send vLLM's `stop_reason` (default true); false behaves like servers that do not say which stop matched. */
  stopReason?: boolean;
  /** Honour stream_options.include_usage (default true). */
  streamUsage?: boolean;
  /** Serve /v1/models (default true). */
  listModels?: boolean;
  /** Wait before answering each request, ms. */
  delayMs?: number;
  /** Wait between streamed chunks, ms. */
  chunkDelayMs?: number;
  /** Default 0: an ephemeral port. */
  port?: number;
}

export interface RecordedRequest {
  path: string;
  method: string;
  authorization: string | null;
  /** The parsed JSON body of a chat-completions request (null for other paths). */
  body: ChatRequestBody | null;
  /** Set when the client closed the connection before the answer was complete (an abort, a client-side stop). */
  clientClosed?: boolean;
}

export interface ChatRequestBody {
  model?: unknown;
  messages?: unknown;
  stream?: unknown;
  stop?: unknown;
  max_tokens?: unknown;
  temperature?: unknown;
  top_p?: unknown;
  seed?: unknown;
  stream_options?: unknown;
  n?: unknown;
  [k: string]: unknown;
}

type Fault =
  | { kind: 'status'; status: number; retryAfter?: number; message?: string }
  | { kind: 'drop'; afterChunks: number }
  | { kind: 'corrupt' }
  | { kind: 'hang' }
  | { kind: 'hold'; afterChunks: number; released: Promise<void> };

export interface ReplayServer {
  /** e.g. http://127.0.0.1:41234/v1 */
  readonly url: string;
  readonly port: number;
  /** Mutable: tests flip knobs between calls. */
  readonly options: ReplayServerOptions;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** `openai:<url>#<model>` for createModel. */
  spec(model?: string): string;
  /** The next n chat requests fail with this status (429 may carry Retry-After, seconds). */
  failNext(n: number, status?: number, opts?: { retryAfter?: number; message?: string }): void;
  /** The next chat request's connection is cut after that many content chunks (non-streaming: before any answer). */
  dropNext(afterChunks?: number): void;
  /** The next chat request gets a malformed SSE data line (non-streaming: a truncated JSON body). */
  corruptNext(): void;
  /** The next n chat requests are never answered (until close). */
  hangNext(n?: number): void;
  /** The next streamed chat request pauses after that many content chunks until the returned function is called
   *  (a test that must see a reply mid-stream waits for it, then releases the rest). */
  holdNext(afterChunks?: number): () => void;
  addEntries(...entries: ReplayEntry[]): void;
  close(): Promise<void>;
}

const TOKEN = /\s*\S+|\s+/g;

export function tokenize(text: string): string[] {
  return text.match(TOKEN) ?? [];
}

export async function startReplayServer(opts: ReplayServerOptions = {}): Promise<ReplayServer> {
  const script: ReplayScript = Array.isArray(opts.script) ? { entries: opts.script } : { entries: [], ...opts.script };
  const options: ReplayServerOptions = {
    ...opts,
    models: opts.models ?? script.models ?? ['replay'],
    defaultResponse: opts.defaultResponse ?? script.default,
  };
  const entries: Array<{ entry: ReplayEntry; used: number }> = script.entries.map((entry) => ({ entry, used: 0 }));
  const requests: RecordedRequest[] = [];
  const faults: Fault[] = [];
  const sockets = new Set<Socket>();
  const hanging = new Set<ServerResponse>();
  let seq = 0;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) sendError(res, 500, `replay server failed: ${e instanceof Error ? e.message : String(e)}`);
      else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0].replace(/\/+$/, '');
    const raw = await readBody(req);
    const record: RecordedRequest = {
      path,
      method: req.method ?? 'GET',
      authorization: req.headers.authorization ?? null,
      body: null,
    };
    requests.push(record);
    let dropped = false;
    res.on('close', () => {
      if (!res.writableFinished && !dropped) record.clientClosed = true;
    });
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    if (req.method === 'GET' && path === '/v1/models') {
      if (options.listModels === false) return sendError(res, 404, 'Not Found');
      return sendJson(res, 200, {
        object: 'list',
        data: (options.models ?? []).map((id) => ({ id, object: 'model', created: 0, owned_by: 'replay' })),
      });
    }
    if (path !== '/v1/chat/completions') return sendError(res, 404, 'Not Found');
    if (req.method !== 'POST') return sendError(res, 405, 'Method Not Allowed');

    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      return sendError(res, 400, 'request body is not JSON');
    }
    record.body = body;
    if (options.delayMs) await wait(options.delayMs);

    const fault = faults.shift();
    if (fault?.kind === 'status') {
      if (fault.retryAfter !== undefined) res.setHeader('retry-after', String(fault.retryAfter));
      return sendError(res, fault.status, fault.message ?? `replay: scripted failure (HTTP ${fault.status})`);
    }
    if (fault?.kind === 'hang') {
      hanging.add(res);
      return;
    }
    if (fault?.kind === 'drop' && body.stream !== true) {
      dropped = true;
      req.socket.destroy();
      return;
    }

    const problem = validate(body);
    if (problem) return sendError(res, 400, problem);
    const model = body.model as string;
    if (!options.anyModel && !(options.models ?? []).includes(model)) {
      return sendError(res, 404, `The model \`${model}\` does not exist.`, 'NotFoundError', 404);
    }
    const messages = body.messages as Array<{ role: WireRole; content: string }>;
    const reply = pick(messages, model);
    if (reply === null) {
      const turn = messages.filter((m) => m.role === 'assistant').length;
      const firstUser = messages.find((m) => m.role === 'user')?.content ?? '';
      return sendError(
        res,
        400,
        `replay: no scripted response for this conversation (assistant turn ${turn}; first user ` +
          `message: ${JSON.stringify(firstUser.slice(0, 120))})`,
      );
    }
    const out = generate(reply, body);
    const promptTokens = messages.reduce((n, m) => n + tokenize(m.content).length, 0);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: out.tokens,
      total_tokens: promptTokens + out.tokens,
    };
    const id = `chatcmpl-replay-${++seq}`;
    const created = Math.floor(Date.now() / 1000);
    const stopFields = options.stopReason === false ? {} : { stop_reason: out.stopReason };

    if (body.stream !== true) {
      if (fault?.kind === 'corrupt') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "truncated", "choices": [');
        return;
      }
      return sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          { index: 0, message: { role: 'assistant', content: out.text }, finish_reason: out.finish, ...stopFields },
        ],
        usage,
      });
    }

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (choice: Record<string, unknown> | null, extra: Record<string, unknown> = {}): string =>
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: choice ? [{ index: 0, ...choice }] : [],
        ...extra,
      })}\n\n`;
    res.write(chunk({ delta: { role: 'assistant', content: '' }, finish_reason: null }));
    const pieces = tokenize(out.text);
    for (let i = 0; i < pieces.length; i++) {
      if (fault?.kind === 'drop' && i >= fault.afterChunks) {
        dropped = true;
        res.socket?.end();
        return;
      }
      if (fault?.kind === 'corrupt' && i === Math.min(1, pieces.length - 1))
        res.write('data: {"choices": [{"delta": {"content": oops\n\n');
      if (fault?.kind === 'hold' && i === fault.afterChunks) await fault.released;
      if (options.chunkDelayMs) await wait(options.chunkDelayMs);
      if (res.destroyed) return;
      res.write(chunk({ delta: { content: pieces[i] }, finish_reason: null }));
    }
    if (fault?.kind === 'drop') {
      dropped = true;
      res.socket?.end();
      return;
    }
    if (fault?.kind === 'corrupt' && pieces.length === 0) res.write('data: {oops\n\n');
    res.write(chunk({ delta: {}, finish_reason: out.finish, ...stopFields }));
    const so = body.stream_options as { include_usage?: unknown } | undefined;
    if (options.streamUsage !== false && so?.include_usage === true) res.write(chunk(null, { usage }));
    res.end('data: [DONE]\n\n');
  }

  function pick(messages: Array<{ role: WireRole; content: string }>, model: string): string | null {
    const turn = messages.filter((m) => m.role === 'assistant').length;
    for (const slot of entries) {
      const e = slot.entry;
      if (e.turn !== undefined && e.turn !== turn) continue;
      if (e.model !== undefined && e.model !== model) continue;
      if (e.match !== undefined) {
        const text = messages
          .filter((m) => e.role === undefined || m.role === e.role)
          .map((m) => m.content)
          .join('\n');
        if (!matches(e.match, text)) continue;
      }
      if (e.responses) {
        if (slot.used >= e.responses.length) continue;
        return e.responses[slot.used++];
      }
      if (e.response !== undefined) {
        slot.used++;
        return e.response;
      }
    }
    return options.defaultResponse ?? null;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}/v1`;

  return {
    url,
    port,
    options,
    requests,
    spec: (model) => `openai:${url}#${model ?? options.models?.[0] ?? 'replay'}`,
    failNext: (n, status = 500, o = {}) => {
      for (let i = 0; i < n; i++) faults.push({ kind: 'status', status, ...o });
    },
    dropNext: (afterChunks = 1) => {
      faults.push({ kind: 'drop', afterChunks });
    },
    corruptNext: () => {
      faults.push({ kind: 'corrupt' });
    },
    hangNext: (n = 1) => {
      for (let i = 0; i < n; i++) faults.push({ kind: 'hang' });
    },
    holdNext: (afterChunks = 1) => {
      let release = (): void => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      faults.push({ kind: 'hold', afterChunks, released });
      return release;
    },
    addEntries: (...more) => {
      for (const entry of more) entries.push({ entry, used: 0 });
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The vLLM way: generate token by token, stop at the first stop string completed, or at max_tokens. */
function generate(
  reply: string,
  body: ChatRequestBody,
): { text: string; finish: 'stop' | 'length'; stopReason: string | null; tokens: number } {
  const stops = (typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : []).filter(
    (s): s is string => typeof s === 'string' && s !== '',
  );
  const max = typeof body.max_tokens === 'number' ? body.max_tokens : Number.POSITIVE_INFINITY;
  const pieces = tokenize(reply);
  let acc = '';
  for (let k = 0; k < pieces.length; k++) {
    if (k >= max) return { text: acc, finish: 'length', stopReason: null, tokens: k };
    acc += pieces[k];
    let best: { index: number; stop: string } | null = null;
    for (const stop of stops) {
      const i = acc.indexOf(stop);
      if (i >= 0 && (!best || i < best.index)) best = { index: i, stop };
    }
    if (best) return { text: acc.slice(0, best.index), finish: 'stop', stopReason: best.stop, tokens: k + 1 };
  }
  return { text: acc, finish: 'stop', stopReason: null, tokens: pieces.length };
}

function validate(body: ChatRequestBody): string | null {
  if (typeof body.model !== 'string' || body.model === '') return 'model is required';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages must be a non-empty array';
  for (const m of body.messages as unknown[]) {
    const msg = m as { role?: unknown; content?: unknown };
    if (!['system', 'user', 'assistant', 'tool'].includes(String(msg?.role)))
      return `bad message role ${JSON.stringify(msg?.role)}`;
    if (typeof msg.content !== 'string') return 'message content must be a string';
  }
  if (body.n !== undefined && body.n !== 1) return 'the replay server answers with one choice (n=1)';
  if (body.stop !== undefined && typeof body.stop !== 'string' && !Array.isArray(body.stop))
    return 'stop must be a string or an array';
  return null;
}

function matches(m: Match, text: string): boolean {
  if (typeof m === 'string') return text.includes(m);
  if (m instanceof RegExp) {
    m.lastIndex = 0;
    return m.test(text);
  }
  return new RegExp(m.regex, m.flags).test(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type = 'BadRequestError',
  code: string | number = status,
): void {
  sendJson(res, status, { error: { message, type, code }, object: 'error' });
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Reads a replay script file: JSON (an array of entries, or {entries, default?, models?}) or JSONL (one entry per
 * line). A regex match is written {"regex": "...", "flags": "i"}.
 */
export function loadReplayScript(file: string): ReplayScript {
  const text = readFileSync(file, 'utf8');
  const bad = (why: string): Error => new Error(`replay script ${file}: ${why}`);
  let script: ReplayScript;
  const trimmed = text.trim();
  if (trimmed.startsWith('[') || (trimmed.startsWith('{') && !file.endsWith('.jsonl'))) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw bad(`not JSON (${(e as Error).message})`);
    }
    script = Array.isArray(v) ? { entries: v as ReplayEntry[] } : (v as ReplayScript);
  } else {
    const entries: ReplayEntry[] = [];
    trimmed.split('\n').forEach((line, i) => {
      if (line.trim() === '') return;
      try {
        entries.push(JSON.parse(line) as ReplayEntry);
      } catch (e) {
        throw bad(`line ${i + 1} is not JSON (${(e as Error).message})`);
      }
    });
    script = { entries };
  }
  if (!Array.isArray(script.entries)) throw bad('needs an "entries" array');
  script.entries.forEach((e, i) => {
    if (typeof e !== 'object' || e === null) throw bad(`entry ${i + 1} is not an object`);
    if (e.response === undefined && !Array.isArray(e.responses))
      throw bad(`entry ${i + 1} has neither "response" nor "responses"`);
    if (e.response !== undefined && typeof e.response !== 'string')
      throw bad(`entry ${i + 1}: "response" must be a string`);
    if (e.turn !== undefined && (!Number.isInteger(e.turn) || e.turn < 0))
      throw bad(`entry ${i + 1}: "turn" must be a whole number >= 0`);
    const m = e.match as unknown;
    if (
      m !== undefined &&
      typeof m !== 'string' &&
      !(typeof m === 'object' && m !== null && typeof (m as { regex?: unknown }).regex === 'string')
    ) {
      throw bad(`entry ${i + 1}: "match" must be a string or {"regex": "...", "flags": "..."}`);
    }
    if (m !== undefined && typeof m === 'object') {
      try {
        new RegExp((m as { regex: string }).regex, (m as { flags?: string }).flags);
      } catch (err) {
        throw bad(`entry ${i + 1}: bad regex (${(err as Error).message})`);
      }
    }
  });
  return script;
}
