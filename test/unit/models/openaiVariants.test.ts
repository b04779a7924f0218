// Server dialects the replay server does not play: each test starts a small real HTTP server on 127.0.0.1 that
// answers the way a particular server (or a broken one) does, and checks the backend copes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createModel, ModelError, type ChatMessage } from '../../../src/core/models';

const ask: ChatMessage[] = [{ role: 'user', content: 'How many singers?' }];
const fast = { retry: { baseDelayMs: 1, maxDelayMs: 5 }, env: {} };
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of closers) await c();
});

type Handler = (body: Record<string, unknown>, res: ServerResponse, req: IncomingMessage, n: number) => void;

async function serve(handler: Handler): Promise<{ spec: string; bodies: Array<Record<string, unknown>> }> {
  const bodies: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      if (req.url?.endsWith('/chat/completions')) bodies.push(body);
      handler(body, res, req, bodies.length);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { spec: `openai:http://127.0.0.1:${(server.address() as AddressInfo).port}/v1#m`, bodies };
}

function sse(res: ServerResponse, events: unknown[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
  if (end) res.end();
}

const delta = (content: string, finish: string | null = null, extra: Record<string, unknown> = {}) => ({
  choices: [{ index: 0, delta: { content }, finish_reason: finish, ...extra }],
});

test("an error event inside a stream is a server error with the server's words", async () => {
  const { spec } = await serve((_b, res) =>
    sse(res, [delta('SEL'), { error: { message: 'CUDA out of memory', code: 500 } }]),
  );
  const m = await createModel(spec, fast);
  await assert.rejects(
    m.generate({ messages: ask, sampling: {}, onText: () => undefined }),
    (e: unknown) => e instanceof ModelError && e.kind === 'server' && /mid-stream: CUDA out of memory/.test(e.message),
  );
});

test('a server that ignores stream:true answers with JSON; its text still reaches onText', async () => {
  const { spec } = await serve((_b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ choices: [{ message: { content: 'SELECT 1' }, finish_reason: 'stop' }] }));
  });
  const seen: string[] = [];
  const r = await (await createModel(spec, fast)).generate({
    messages: ask,
    sampling: {},
    onText: (d) => seen.push(d),
  });
  assert.deepEqual([r.text, seen], ['SELECT 1', ['SELECT 1']]);
  assert.equal(r.usageEstimated, true);
});

test(
  'a stream that ends after finish_reason without ' + '[DONE] is complete; one that ends before it is retried',
  async () => {
    const { spec, bodies } = await serve((_b, res, _req, n) => {
      if (n === 1) sse(res, []);
      else sse(res, [delta('SELECT 1'), delta('', 'length')]);
    });
    const r = await (await createModel(spec, fast)).generate({ messages: ask, sampling: {}, onText: () => undefined });
    assert.deepEqual([r.text, r.finishReason, r.attempts], ['SELECT 1', 'length', 2]);
    assert.equal(bodies.length, 2);
  },
);

test("SGLang's matched_stop names the stop string", async () => {
  const { spec } = await serve((_b, res) =>
    sse(res, [delta('<sql>SELECT 1'), delta('', 'stop', { matched_stop: '</sql>' }), '[DONE]']),
  );
  const r = await (await createModel(spec, fast)).generate({
    messages: ask,
    sampling: { stop: ['</sql>', 'x'] },
    onText: () => undefined,
  });
  assert.deepEqual([r.stopString, r.stopStringSource], ['</sql>', 'server']);
});

test('a 400 about stream_options: sent again without it, and left out from then on', async () => {
  const { spec, bodies } = await serve((body, res) => {
    if (body.stream_options !== undefined) {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: "extra field 'stream_options' not permitted" } }));
    } else sse(res, [delta('ok', 'stop'), '[DONE]']);
  });
  const m = await createModel(spec, fast);
  assert.equal((await m.generate({ messages: ask, sampling: {}, onText: () => undefined })).text, 'ok');
  assert.equal((await m.generate({ messages: ask, sampling: {}, onText: () => undefined })).text, 'ok');
  assert.deepEqual(
    bodies.map((b) => 'stream_options' in b),
    [true, false, false],
  );
});

test("Ollama's wording of a missing model is recognised, with the list from /v1/models", async () => {
  const { spec } = await serve((_b, res, req) => {
    res.writeHead(req.url?.endsWith('/models') ? 200 : 404, { 'content-type': 'application/json' });
    res.end(
      req.url?.endsWith('/models')
        ? JSON.stringify({ object: 'list', data: [{ id: 'qwen2.5:7b' }] })
        : JSON.stringify({ error: { message: 'model "m" not found, try pulling it first' } }),
    );
  });
  await assert.rejects(
    (await createModel(spec, fast)).generate({ messages: ask, sampling: {} }),
    (e: unknown) => e instanceof ModelError && e.kind === 'unknown-model' && /serves: qwen2\.5:7b/.test(e.message),
  );
});

test('a 400 that is not about the model (context too long) is a server error quoting it, not retried', async () => {
  const { spec, bodies } = await serve((_b, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: "This model's maximum context length is 4096 tokens." } }));
  });
  await assert.rejects(
    (await createModel(spec, fast)).generate({ messages: ask, sampling: {} }),
    (e: unknown) =>
      e instanceof ModelError && e.kind === 'server' && /HTTP 400.*maximum context length/.test(e.message),
  );
  assert.equal(bodies.length, 1);
});

test('JSON that is not an answer: no choices, or non-text content', async () => {
  let reply: unknown = { object: 'chat.completion', choices: [] };
  const { spec } = await serve((_b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply));
  });
  const m = await createModel(spec, fast);
  await assert.rejects(
    m.generate({ messages: ask, sampling: {} }),
    (e: unknown) => e instanceof ModelError && e.kind === 'bad-response' && /without choices/.test(e.message),
  );
  reply = { choices: [{ message: { content: [1, 2] }, finish_reason: 'stop' }] };
  await assert.rejects(
    m.generate({ messages: ask, sampling: {} }),
    (e: unknown) => e instanceof ModelError && e.kind === 'bad-response' && /non-text/.test(e.message),
  );
  reply = [1];
  await assert.rejects(
    m.generate({ messages: ask, sampling: {} }),
    (e: unknown) => e instanceof ModelError && e.kind === 'bad-response' && /not a JSON object/.test(e.message),
  );
});

test('an SSE body labelled as something else is still read as a stream', async () => {
  const { spec } = await serve((_b, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(
      `data: ${JSON.stringify(delta('SELECT '))}\n\ndata: ${JSON.stringify(delta('1', 'stop'))}\n\ndata: [DONE]\n\n`,
    );
  });
  const seen: string[] = [];
  const r = await (await createModel(spec, fast)).generate({
    messages: ask,
    sampling: {},
    onText: (d) => seen.push(d),
  });
  assert.deepEqual([r.text, seen], ['SELECT 1', ['SELECT ', '1']]);
});

test('a port fetch refuses outright is unreachable at once, not retried', async () => {
  const retries: number[] = [];
  const m = await createModel('openai:http://127.0.0.1:1/v1#m', {
    env: {},
    retry: { baseDelayMs: 1 },
    onRetry: (r) => retries.push(r.attempt),
  });
  await assert.rejects(
    m.generate({ messages: [{ role: 'user', content: 'x' }], sampling: {} }),
    (e: unknown) => e instanceof ModelError && e.kind === 'unreachable' && /127\.0\.0\.1:1\/v1/.test(e.message),
  );
  assert.deepEqual(retries, []);
});
