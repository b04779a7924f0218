// The `openai` backend: any server with an OpenAI-compatible /v1/chat/completions endpoint (vLLM, SGLang, Ollama,
// llama.cpp server, LM Studio, OpenAI itself), over Node's global fetch.
import type { ChatMessage, ChatModel, FinishReason, GenerateRequest, GenerateResult, TokenUsage } from './types';
import { ModelError } from './types';
import type { OpenAISpec } from './spec';
import { DEFAULT_RETRY, backoffMs, retryAfterMs, sleep, type RetryPolicy } from './retry';
import { sseData } from './sse';
import { StopCutter, findStop, inferStopString, splitStops } from './stops';

export interface OpenAIModelOptions {
  /** Wins over the environment (the editor passes the key it keeps in SecretStorage). */
  apiKey?: string;
  /** Where QUARRY_API_KEY / OPENAI_API_KEY are read from; process.env by default. */
  env?: Record<string, string | undefined>;
  /** Retry policy; any field left out keeps its default (4 retries, 500 ms doubling to 8 s, Retry-After up to 60 s). */
  retry?: Partial<RetryPolicy>;
  /** Per-call limit when the request sets none, ms (default 10 minutes: CPU-served models can be slow). */
  timeoutMs?: number;
  /** 'auto' (default) streams when the request has onText; true/false force it. */
  stream?: boolean | 'auto';
  /** How many stop strings the server is sent; the rest are cut here. OpenAI's API allows 4 (the default). */
  serverStopLimit?: number;
  /**
   * The most characters of one response that are read (default 1,000,000, about 250k tokens): past it the rest is
   * not read, the turn keeps what came before and is marked over-long, and memory stays bounded whatever a server
   * sends.
   */
  maxResponseChars?: number;
  /** Extra request headers (e.g. an organisation header). */
  headers?: Record<string, string>;
  /** Told about each retry before its wait, e.g. to log it. */
  onRetry?: (info: RetryInfo) => void;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  reason: string;
}

const MODELS_LIST_TIMEOUT_MS = 5_000;

/** Connection failures worth another attempt: the server went away mid-request, it may well be back. */
const TRANSIENT = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ETIMEDOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/** Something worth trying again (429, 5xx, a reset connection), with the error to raise when retries run out. */
class RetryableFailure extends Error {
  constructor(
    readonly error: ModelError,
    readonly retryAfter: number | null,
  ) {
    super(error.message);
  }
}

/** The text already passed to onText when a stream broke; such a call cannot be retried without repeating it. */
class BrokenStream extends Error {
  constructor(readonly error: ModelError) {
    super(error.message);
  }
}

/** The caller's onText threw: that error goes back to the caller as it is, never dressed as a server failure. */
class CallbackError extends Error {
  constructor(readonly original: unknown) {
    super('onText threw');
  }
}

function callOnText(req: GenerateRequest, text: string): void {
  try {
    req.onText?.(text);
  } catch (e) {
    throw new CallbackError(e);
  }
}

interface Attempt {
  text: string;
  finishReason: FinishReason;
  stopString: string | null;
  stopStringSource?: 'server' | 'client';
  /** The server said whether a stop string matched (vLLM's stop_reason, SGLang's matched_stop), even if null. */
  serverToldStop: boolean;
  usage: TokenUsage | null;
  firstTokenAt: number | null;
  overLong?: boolean;
}

/** Default of maxResponseChars. */
export const DEFAULT_MAX_RESPONSE_CHARS = 1_000_000;

/** A response body read up to `maxBytes` (then the connection is let go): a runaway server cannot fill memory. */
async function readCappedText(res: Response, maxBytes: number): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    total += value.length;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new ModelError(
        'bad-response',
        `the response body passed ${maxBytes} bytes without being a complete answer; ` +
          'raise maxResponseChars (--max-response-chars) if a turn can really be that long',
      );
    }
  }
  return Buffer.concat(parts).toString('utf8');
}

export function createOpenAIModel(spec: OpenAISpec, opts: OpenAIModelOptions = {}): ChatModel {
  return new OpenAIChatModel(spec, opts);
}

class OpenAIChatModel implements ChatModel {
  readonly spec: string;
  private readonly url: string;
  private readonly policy: RetryPolicy;
  private readonly key: { value: string; from: string } | null;
  private readonly inflight = new Set<AbortController>();
  private closed = false;
  private readonly maxResponseChars: number;
  /** Cleared once a server rejects stream_options (older vLLM and llama.cpp builds), so later calls leave it out. */
  private sendStreamOptions = true;

  constructor(
    private readonly target: OpenAISpec,
    private readonly opts: OpenAIModelOptions,
  ) {
    this.spec = target.raw;
    this.url = `${target.baseURL}/chat/completions`;
    this.policy = { ...DEFAULT_RETRY, ...opts.retry };
    this.maxResponseChars = opts.maxResponseChars ?? DEFAULT_MAX_RESPONSE_CHARS;
    const env = opts.env ?? process.env;
    if (opts.apiKey) this.key = { value: opts.apiKey, from: 'the apiKey option' };
    else if (env.QUARRY_API_KEY) this.key = { value: env.QUARRY_API_KEY, from: 'QUARRY_API_KEY' };
    else if (env.OPENAI_API_KEY) this.key = { value: env.OPENAI_API_KEY, from: 'OPENAI_API_KEY' };
    else this.key = null;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.inflight) c.abort(new ModelError('server', 'the model was closed'));
    this.inflight.clear();
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    if (this.closed) throw new ModelError('server', `the model ${this.spec} has been closed`);
    if (req.signal?.aborted) throw abortError();
    const started = performance.now();
    const ctl = new AbortController();
    this.inflight.add(ctl);
    const timeoutMs = req.timeoutMs ?? this.opts.timeoutMs ?? 600_000;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctl.abort(new Error('timeout'));
    }, timeoutMs);
    const onAbort = (): void => ctl.abort(abortError());
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const failures: ModelError[] = [];
    try {
      const { result, attempts } = await this.withRetries(req, ctl.signal, failures);
      const totalMs = performance.now() - started;
      return this.finish(req, result, attempts, totalMs, started);
    } catch (e) {
      if (e instanceof CallbackError) throw e.original;
      if (req.signal?.aborted) throw abortError();
      if (timedOut) {
        // The limit ran out while retrying a failure: that failure is what went wrong, so it is named first.
        const last = failures.at(-1);
        if (last)
          throw this.redact(
            new ModelError(
              last.kind,
              `${last.message} (the ${timeoutMs} ms limit ran out while retrying after ${failures.length} ` +
                `failed attempt${failures.length === 1 ? '' : 's'})`,
            ),
          );
        throw new ModelError('timeout', `no complete answer from ${this.url} within ${timeoutMs} ms`);
      }
      if (e instanceof ModelError) throw this.redact(e);
      throw this.redact(new ModelError('bad-response', `unexpected failure talking to ${this.url}: ${describe(e)}`));
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      this.inflight.delete(ctl);
    }
  }

  private async withRetries(
    req: GenerateRequest,
    signal: AbortSignal,
    failures: ModelError[] = [],
  ): Promise<{ result: Attempt; attempts: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return { result: await this.attempt(req, signal), attempts: attempt };
      } catch (e) {
        if (e instanceof RetryableFailure) failures.push(e.error);
        if (signal.aborted) throw e;
        if (e instanceof BrokenStream) throw e.error;
        if (!(e instanceof RetryableFailure)) throw e;
        if (attempt > this.policy.maxRetries) {
          throw new ModelError(e.error.kind, `${e.error.message} (gave up after ${attempt} attempts)`);
        }
        if (e.retryAfter !== null && e.retryAfter > this.policy.maxRetryAfterMs) {
          throw new ModelError(
            e.error.kind,
            `${e.error.message}; the server asks to wait ${Math.ceil(e.retryAfter / 1000)} s, longer than ` +
              `the ${Math.round(this.policy.maxRetryAfterMs / 1000)} s this client waits`,
          );
        }
        const delayMs = e.retryAfter ?? backoffMs(attempt, this.policy);
        this.opts.onRetry?.({ attempt, delayMs, reason: e.error.message });
        await sleep(delayMs, signal);
      }
    }
  }

  private body(req: GenerateRequest, stream: boolean, serverStops: string[]): Record<string, unknown> {
    const s = req.sampling ?? {};
    const body: Record<string, unknown> = { model: this.target.model, messages: req.messages.map(toWire), stream };
    if (s.temperature !== undefined) body.temperature = s.temperature;
    if (s.topP !== undefined) body.top_p = s.topP;
    if (s.maxTokens !== undefined) body.max_tokens = s.maxTokens;
    if (s.seed !== undefined) body.seed = s.seed;
    if (serverStops.length > 0) body.stop = serverStops;
    if (stream && this.sendStreamOptions) body.stream_options = { include_usage: true };
    return body;
  }

  private async attempt(req: GenerateRequest, signal: AbortSignal): Promise<Attempt> {
    const mode = this.opts.stream ?? 'auto';
    const stream = mode === 'auto' ? req.onText !== undefined : mode;
    const { server, client } = splitStops(req.sampling?.stop, this.opts.serverStopLimit ?? 4);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...this.opts.headers,
    };
    if (this.key) headers.authorization = `Bearer ${this.key.value}`;
    let res: Response;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify(this.body(req, stream, server)),
        signal,
      });
    } catch (e) {
      throw this.connectionFailure(e, signal);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      if (stream && this.sendStreamOptions && res.status === 400 && /stream_options/i.test(text)) {
        this.sendStreamOptions = false;
        return this.attempt(req, signal);
      }
      throw await this.httpFailure(res, text, signal);
    }
    const type = res.headers.get('content-type') ?? '';
    // A server that ignores `stream: true` answers with one JSON body; take it as it is.
    if (stream && type.includes('text/event-stream')) return this.readStream(res, req, client, signal);
    return this.readWhole(res, req, client, signal);
  }

  private async readWhole(
    res: Response,
    req: GenerateRequest,
    clientStops: string[],
    signal: AbortSignal,
  ): Promise<Attempt> {
    let raw: string;
    try {
      raw = await readCappedText(res, this.maxResponseChars * 4 + 65_536);
    } catch (e) {
      if (e instanceof ModelError) throw e;
      throw this.connectionFailure(e, signal);
    }
    // An SSE body under another content type (some proxies relabel it): read it as the stream it is.
    if (/^\s*data:/.test(raw)) return this.readStream(new Response(raw), req, clientStops, signal);
    const json = this.parseJson(raw, 'response body');
    const choice = firstChoice(json);
    if (!choice) throw new ModelError('bad-response', `${this.url} answered without choices: ${clip(raw)}`);
    const message = choice.message as Record<string, unknown> | undefined;
    const content = message?.content;
    if (content !== null && content !== undefined && typeof content !== 'string') {
      throw new ModelError('bad-response', `${this.url} answered with non-text message content: ${clip(raw)}`);
    }
    let text = (content as string | null | undefined) ?? '';
    const firstTokenAt = text !== '' ? performance.now() : null;
    let finishReason = mapFinish(choice.finish_reason);
    let stop = serverStop(choice);
    const hit = findStop(text, clientStops);
    if (hit) {
      text = text.slice(0, hit.index);
      finishReason = 'stop';
      stop = { told: true, value: hit.stop, source: 'client' };
    }
    if (text !== '') callOnText(req, text);
    return {
      text,
      finishReason,
      stopString: stop.value,
      stopStringSource: stop.source,
      serverToldStop: stop.told,
      usage: readUsage(json),
      firstTokenAt,
    };
  }

  private async readStream(
    res: Response,
    req: GenerateRequest,
    clientStops: string[],
    signal: AbortSignal,
  ): Promise<Attempt> {
    const cutter = new StopCutter(clientStops);
    let text = '';
    let emitted = 0;
    let firstTokenAt: number | null = null;
    let finish: unknown = null;
    let sawFinish = false;
    let stop: ServerStop = { told: false, value: null };
    let usage: TokenUsage | null = null;
    let sawDone = false;
    let overLong = false;
    const cap = this.maxResponseChars;
    const emit = (piece: string): void => {
      if (piece === '') return;
      if (text.length + piece.length > cap) {
        piece = piece.slice(0, Math.max(0, cap - text.length));
        overLong = true;
      }
      text += piece;
      emitted += piece.length;
      callOnText(req, piece);
    };
    if (!res.body) throw new ModelError('bad-response', `${this.url} sent an empty stream`);
    try {
      for await (const data of sseData(res.body)) {
        if (data.trim() === '[DONE]') {
          sawDone = true;
          break;
        }
        const chunk = this.parseJson(data, 'stream event');
        if (chunk.error)
          throw new ModelError('server', `${this.url} reported an error mid-stream: ${errorText(chunk)}`);
        usage = readUsage(chunk) ?? usage;
        const choice = firstChoice(chunk);
        if (!choice) continue;
        const delta = (choice.delta as Record<string, unknown> | undefined)?.content;
        if (typeof delta === 'string' && delta !== '') {
          firstTokenAt ??= performance.now();
          const { emit: safe, stop: clientStop } = cutter.push(delta);
          emit(safe);
          if (overLong) break; // stop reading: the rest of the body is never buffered
          if (clientStop !== null) {
            finish = 'stop';
            sawFinish = true;
            stop = { told: true, value: clientStop, source: 'client' };
            sawDone = true;
            break;
          }
        }
        if (choice.finish_reason !== null && choice.finish_reason !== undefined) {
          finish = choice.finish_reason;
          sawFinish = true;
          stop = serverStop(choice);
        }
      }
    } catch (e) {
      if (e instanceof ModelError || e instanceof CallbackError || signal.aborted) throw e;
      const failure = this.connectionFailure(e, signal, 'mid-stream');
      if (emitted > 0) {
        const err = failure instanceof RetryableFailure ? failure.error : failure;
        throw new BrokenStream(new ModelError(err.kind, `${err.message}, after ${emitted} characters had arrived`));
      }
      throw failure;
    }
    if (overLong) {
      return {
        text,
        finishReason: 'length',
        stopString: null,
        serverToldStop: false,
        usage,
        firstTokenAt,
        overLong: true,
      };
    }
    if (!sawDone && !sawFinish) {
      const error = new ModelError(
        'server',
        `the stream from ${this.url} ended before it finished (no finish_reason, no [DONE])`,
      );
      if (emitted > 0)
        throw new BrokenStream(new ModelError('server', `${error.message}, after ${emitted} characters had arrived`));
      throw new RetryableFailure(error, null);
    }
    if (stop.source !== 'client') emit(cutter.flush());
    return {
      text,
      finishReason: mapFinish(finish),
      stopString: stop.value,
      stopStringSource: stop.source,
      serverToldStop: stop.told,
      usage,
      firstTokenAt,
    };
  }

  private finish(req: GenerateRequest, a: Attempt, attempts: number, totalMs: number, started: number): GenerateResult {
    const result: GenerateResult = {
      text: a.text,
      finishReason: a.finishReason,
      stopString: a.stopString,
      usage: a.usage ?? estimateUsage(req.messages, a.text),
      timings: { totalMs, firstTokenMs: a.firstTokenAt === null ? null : a.firstTokenAt - started },
      attempts,
    };
    if (!a.usage) result.usageEstimated = true;
    if (a.overLong) result.overLong = true;
    if (a.stopString !== null && a.stopStringSource) result.stopStringSource = a.stopStringSource;
    else if (!a.serverToldStop && a.finishReason === 'stop') {
      const stops = splitStops(req.sampling?.stop, Number.POSITIVE_INFINITY).server;
      const guess = inferStopString(a.text, stops);
      if (guess !== null) {
        result.stopString = guess;
        result.stopStringSource = 'inferred';
      }
    }
    return result;
  }

  private parseJson(raw: string, what: string): Record<string, unknown> {
    let v: unknown;
    try {
      v = JSON.parse(raw);
    } catch {
      throw new ModelError('bad-response', `${this.url} sent a ${what} that is not JSON: ${clip(raw)}`);
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new ModelError('bad-response', `${this.url} sent a ${what} that is not a JSON object: ${clip(raw)}`);
    }
    return v as Record<string, unknown>;
  }

  /** fetch failed before or while reading a response: refused, reset, unknown host, or our own abort. */
  private connectionFailure(e: unknown, signal: AbortSignal, when = ''): RetryableFailure | ModelError {
    if (signal.aborted) return e instanceof ModelError ? e : new ModelError('server', describe(e));
    const code = errorCode(e);
    const where = when ? ` ${when}` : '';
    if (code === 'ECONNREFUSED') {
      return new ModelError(
        'unreachable',
        `cannot reach the model server at ${this.url}: connection refused (is the server running, on this port?)`,
      );
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return new ModelError('unreachable', `cannot reach the model server at ${this.url}: host not found (${code})`);
    }
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new ModelError(
        'timeout',
        `${this.url} sent nothing for 300 s, the longest Node's fetch waits${where} (${code}); stream ` +
          `long generations (pass onText) so text keeps arriving`,
      );
    }
    // Resets, sockets closed by the other side, half-read bodies: a restarting or overloaded server; try again.
    if (code !== undefined && TRANSIENT.has(code)) {
      return new RetryableFailure(
        new ModelError('unreachable', `the connection to ${this.url} broke${where} (${code})`),
        null,
      );
    }
    return new ModelError('unreachable', `cannot talk to the model server at ${this.url}${where}: ${describe(e)}`);
  }

  private async httpFailure(res: Response, text: string, signal: AbortSignal): Promise<RetryableFailure | ModelError> {
    const status = res.status;
    const said = errorText(safeJson(text)) || clip(text) || res.statusText;
    if (status === 401 || status === 403) {
      const sent = this.key
        ? `the API key from ${this.key.from} was refused`
        : 'no API key was sent (set QUARRY_API_KEY or OPENAI_API_KEY)';
      return new ModelError('auth', `${this.url} answered HTTP ${status}: ${sent}. Server said: ${said}`);
    }
    if (status === 429)
      return new RetryableFailure(
        new ModelError('rate-limit', `${this.url} is rate-limiting (HTTP 429): ${said}`),
        retryAfterMs(res.headers),
      );
    if (status >= 500)
      return new RetryableFailure(
        new ModelError('server', `${this.url} failed with HTTP ${status}: ${said}`),
        retryAfterMs(res.headers),
      );
    const aboutModel =
      /model/i.test(said) &&
      /not found|does not exist|not exist|unknown|no such|not available|invalid model|not served/i.test(said);
    if (status === 404 || ((status === 400 || status === 422) && aboutModel)) {
      const served = await this.listModels(signal);
      if (aboutModel || (served !== null && !served.includes(this.target.model))) {
        const list =
          served === null
            ? 'the server does not list its models'
            : served.length === 0
              ? 'it lists no models'
              : `it serves: ${served.join(', ')}`;
        return new ModelError(
          'unknown-model',
          `model ${JSON.stringify(this.target.model)} is not served by ${this.target.baseURL}; ${list}`,
        );
      }
      if (status === 404) {
        return new ModelError(
          'unreachable',
          `no chat-completions endpoint at ${this.url} (HTTP 404: ${said}); OpenAI-compatible base URLs ` +
            `usually end in /v1`,
        );
      }
    }
    return new ModelError('server', `${this.url} refused the request (HTTP ${status}): ${said}`);
  }

  /** The model ids the server lists at /models, or null when it lists none (endpoint missing, not JSON, down). */
  private async listModels(callSignal: AbortSignal): Promise<string[] | null> {
    try {
      const headers: Record<string, string> = { accept: 'application/json', ...this.opts.headers };
      if (this.key) headers.authorization = `Bearer ${this.key.value}`;
      const res = await fetch(`${this.target.baseURL}/models`, {
        headers,
        signal: AbortSignal.any([callSignal, AbortSignal.timeout(MODELS_LIST_TIMEOUT_MS)]),
      });
      if (!res.ok) return null;
      const json = (await res.json()) as { data?: unknown };
      if (!Array.isArray(json.data)) return null;
      return json.data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string');
    } catch {
      return null;
    }
  }

  /** Error text can quote request details back; the key never leaves this object. */
  private redact(e: ModelError): ModelError {
    if (!this.key || !e.message.includes(this.key.value)) return e;
    return new ModelError(e.kind, e.message.split(this.key.value).join('***'));
  }
}

interface ServerStop {
  told: boolean;
  value: string | null;
  source?: 'server' | 'client';
}

/** vLLM's `stop_reason` and SGLang's `matched_stop`: the stop string, a stop token id (a number), or null for EOS. */
function serverStop(choice: Record<string, unknown>): ServerStop {
  for (const key of ['stop_reason', 'matched_stop']) {
    if (!(key in choice)) continue;
    const v = choice[key];
    return typeof v === 'string' ? { told: true, value: v, source: 'server' } : { told: true, value: null };
  }
  return { told: false, value: null };
}

function toWire(m: ChatMessage): { role: string; content: string } {
  return { role: m.role, content: m.content };
}

function firstChoice(json: Record<string, unknown>): Record<string, unknown> | null {
  const choices = json.choices;
  if (!Array.isArray(choices) || choices.length === 0) return null;
  const c = choices[0];
  return typeof c === 'object' && c !== null ? (c as Record<string, unknown>) : null;
}

function mapFinish(reason: unknown): FinishReason {
  if (reason === 'length') return 'length';
  if (reason === 'abort') return 'abort';
  return 'stop';
}

function readUsage(json: Record<string, unknown>): TokenUsage | null {
  const u = json.usage as Record<string, unknown> | null | undefined;
  if (!u || typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return null;
  return { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens };
}

/** About 4 characters a token, plus a few tokens of chat-template framing a message. */
export function estimateUsage(messages: ChatMessage[], completion: string): TokenUsage {
  const promptChars = messages.reduce((n, m) => n + m.content.length, 0);
  return {
    promptTokens: Math.ceil(promptChars / 4) + 4 * messages.length,
    completionTokens: Math.ceil(completion.length / 4),
  };
}

function errorText(json: unknown): string {
  if (typeof json !== 'object' || json === null) return '';
  const err = (json as { error?: unknown; message?: unknown; detail?: unknown }).error;
  if (typeof err === 'string') return err;
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  const msg = (json as { message?: unknown }).message ?? (json as { detail?: unknown }).detail;
  return typeof msg === 'string' ? msg : '';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function errorCode(e: unknown): string | undefined {
  for (let cur: unknown = e, depth = 0; cur && depth < 5; depth++) {
    const c = cur as { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof c.code === 'string' && !c.code.startsWith('ABORT')) return c.code;
    if (Array.isArray(c.errors) && c.errors.length > 0) {
      const inner = errorCode(c.errors[0]);
      if (inner) return inner;
    }
    cur = c.cause;
  }
  return undefined;
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
    return `${e.message}${cause}`;
  }
  return String(e);
}

function clip(s: string, n = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n)}…` : one;
}

function abortError(): Error {
  return new DOMException('the model call was aborted', 'AbortError');
}
