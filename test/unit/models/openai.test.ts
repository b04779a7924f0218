// The openai backend against the replay server over a real socket on 127.0.0.1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createModel, ModelError, type ChatMessage, type ChatModel } from '../../../src/core/models';
import { startReplayServer, type ReplayServerOptions } from '../../support/openaiReplayServer';

const ask: ChatMessage[] = [
  { role: 'system', content: 'You write SQLite.' },
  { role: 'user', content: 'How many singers are there?' },
];
const answer = 'Let me count. <sql>SELECT count(*) FROM singer</sql> That is all.';
const fast = { retry: { baseDelayMs: 1, maxDelayMs: 5 }, env: {} };

const open: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const c of open) await c.close();
});

async function setup(
  opts: ReplayServerOptions = {},
  modelOpts: Parameters<typeof createModel>[1] = fast,
  model?: string,
) {
  const server = await startReplayServer({ script: [{ match: 'singers', response: answer }], ...opts });
  open.push(server);
  const m = await createModel(server.spec(model), modelOpts);
  open.push(m);
  return { server, model: m };
}

/** The server notices a closed connection a moment after the client closes it; wait for that, boundedly. */
async function closedByClient(rec: { clientClosed?: boolean }): Promise<void> {
  for (let i = 0; i < 200 && !rec.clientClosed; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(rec.clientClosed, true, 'the server saw the client close the connection before the answer was complete');
}

async function rejectsWith(p: Promise<unknown>, kind: string, pattern: RegExp): Promise<ModelError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof ModelError, `expected a ModelError, got ${String(e)}`);
    assert.equal(e.kind, kind, e.message);
    assert.match(e.message, pattern);
    return e;
  }
  assert.fail(`expected a ModelError of kind ${kind}`);
}

test('non-streaming: text cut at the stop string, which vLLM-style stop_reason names', async () => {
  const { server, model } = await setup();
  const r = await model.generate({ messages: ask, sampling: { stop: ['</sql>'], temperature: 0, topP: 0.9, seed: 7 } });
  assert.equal(r.text, 'Let me count. <sql>SELECT count(*) FROM singer');
  assert.equal(r.finishReason, 'stop');
  assert.equal(r.stopString, '</sql>');
  assert.equal(r.stopStringSource, 'server');
  assert.equal(r.usageEstimated, undefined);
  // Seven tokens were generated: the seventh, ' singer</sql>', completed the stop string (vLLM counts it).
  assert.equal(r.usage.completionTokens, 7);
  assert.equal(r.usage.promptTokens, 8);
  assert.equal(r.attempts, 1);
  assert.ok(r.timings.totalMs >= 0);
  const sent = server.requests.at(-1)!.body!;
  assert.equal(sent.stream, false);
  assert.deepEqual([sent.temperature, sent.top_p, sent.seed, sent.stop], [0, 0.9, 7, ['</sql>']]);
  assert.equal('max_tokens' in sent, false, 'unset sampling fields are not sent');
});

test('streaming: deltas reach onText in order, usage comes from the final chunk', async () => {
  const { server, model } = await setup();
  const seen: string[] = [];
  const r = await model.generate({ messages: ask, sampling: { stop: ['</sql>'] }, onText: (d) => seen.push(d) });
  assert.ok(seen.length > 1, 'the answer arrived in several pieces');
  assert.equal(seen.join(''), r.text);
  assert.equal(r.text, 'Let me count. <sql>SELECT count(*) FROM singer');
  assert.equal(r.stopString, '</sql>');
  assert.equal(r.usage.completionTokens, 7);
  assert.equal(r.usageEstimated, undefined);
  assert.notEqual(r.timings.firstTokenMs, null);
  const sent = server.requests.at(-1)!.body!;
  assert.equal(sent.stream, true);
  assert.deepEqual(sent.stream_options, { include_usage: true });
});

test('streaming without usage from the server: an estimate, flagged as one', async () => {
  const { model } = await setup({ streamUsage: false });
  const r = await model.generate({ messages: ask, sampling: {}, onText: () => undefined });
  assert.equal(r.text, answer);
  assert.equal(r.usageEstimated, true);
  assert.equal(r.usage.completionTokens, Math.ceil(answer.length / 4));
});

test('max_tokens ends with finishReason length and no stop string', async () => {
  const { model } = await setup();
  for (const onText of [undefined, () => undefined]) {
    const r = await model.generate({ messages: ask, sampling: { maxTokens: 3, stop: ['</sql>'] }, onText });
    assert.equal(r.text, 'Let me count.');
    assert.equal(r.finishReason, 'length');
    assert.equal(r.stopString, null);
  }
});

test('more than 4 stop strings: the first 4 go to the server, the rest are cut here, in both modes', async () => {
  const { server, model } = await setup();
  const stop = ['AAA', 'BBB', 'CCC', 'DDD', 'FROM'];
  const r = await model.generate({ messages: ask, sampling: { stop } });
  assert.deepEqual(server.requests.at(-1)!.body!.stop, ['AAA', 'BBB', 'CCC', 'DDD']);
  assert.equal(r.text, 'Let me count. <sql>SELECT count(*) ');
  assert.deepEqual([r.finishReason, r.stopString, r.stopStringSource], ['stop', 'FROM', 'client']);

  const seen: string[] = [];
  const s = await model.generate({ messages: ask, sampling: { stop }, onText: (d) => seen.push(d) });
  assert.equal(s.text, 'Let me count. <sql>SELECT count(*) ');
  assert.equal(seen.join(''), s.text, 'onText never saw text past the client-side stop');
  assert.deepEqual([s.stopString, s.stopStringSource], ['FROM', 'client']);
});

test('a client-side stop string closes the stream at once instead of reading the rest', async () => {
  const long = Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ');
  const { server, model } = await setup({ script: [{ response: long }], chunkDelayMs: 2 });
  const r = await model.generate({
    messages: ask,
    sampling: { stop: ['a', 'b', 'c', 'd', 'w5 '] },
    onText: () => undefined,
  });
  assert.deepEqual([r.text, r.stopString, r.stopStringSource], ['w0 w1 w2 w3 w4 ', 'w5 ', 'client']);
  await closedByClient(server.requests.at(-1)!);
});

test('without stop_reason from the server, a closing tag after an unclosed opener is inferred', async () => {
  const { model } = await setup({ stopReason: false });
  const r = await model.generate({ messages: ask, sampling: { stop: ['</sql>', '</answer>'] } });
  assert.equal(r.text, 'Let me count. <sql>SELECT count(*) FROM singer');
  assert.deepEqual([r.stopString, r.stopStringSource], ['</sql>', 'inferred']);
  // Two plain strings are both possible: the backend does not guess.
  const two = await model.generate({ messages: ask, sampling: { stop: ['</sql>', 'Observation:'] } });
  assert.equal(two.stopString, null);
});

test('vLLM says stop_reason null when the model ended by itself: nothing is inferred', async () => {
  const { model } = await setup({ script: [{ match: 'singers', response: 'I need <sql>SELECT' }] });
  const r = await model.generate({ messages: ask, sampling: { stop: ['</sql>'] } });
  assert.equal(r.text, 'I need <sql>SELECT');
  assert.equal(r.stopString, null);
});

test('script turns: the assistant turn index picks the answer', async () => {
  const { model } = await setup({
    script: [
      { match: 'singers', turn: 0, response: 'first' },
      { match: 'singers', turn: 1, response: 'second' },
    ],
  });
  const r0 = await model.generate({ messages: ask, sampling: {} });
  const r1 = await model.generate({
    messages: [...ask, { role: 'assistant', content: r0.text }, { role: 'user', content: 'ok' }],
    sampling: {},
  });
  assert.deepEqual([r0.text, r1.text], ['first', 'second']);
});

test('429 then 500 then success: retried, honouring Retry-After', async () => {
  const retries: Array<{ attempt: number; delayMs: number; reason: string }> = [];
  const { server, model } = await setup({}, { ...fast, onRetry: (i) => retries.push(i) });
  server.failNext(1, 429, { retryAfter: 0 });
  server.failNext(1, 500);
  const r = await model.generate({ messages: ask, sampling: {} });
  assert.equal(r.text, answer);
  assert.equal(r.attempts, 3);
  assert.equal(retries.length, 2);
  assert.equal(retries[0].delayMs, 0, 'Retry-After: 0 is honoured');
  assert.match(retries[0].reason, /429/);
  assert.match(retries[1].reason, /HTTP 500/);
});

test('gives up after maxRetries with the last error, naming the attempts', async () => {
  const { server, model } = await setup({}, { ...fast, retry: { ...fast.retry, maxRetries: 2 } });
  server.failNext(5, 503);
  await rejectsWith(model.generate({ messages: ask, sampling: {} }), 'server', /HTTP 503.*gave up after 3 attempts/);
  assert.equal(server.requests.length, 3);
  server.failNext(5, 429);
  await rejectsWith(model.generate({ messages: ask, sampling: {} }), 'rate-limit', /429.*gave up after 3 attempts/);
});

test('a Retry-After longer than the client waits fails at once, saying so', async () => {
  const { server, model } = await setup();
  server.failNext(1, 429, { retryAfter: 3600 });
  await rejectsWith(model.generate({ messages: ask, sampling: {} }), 'rate-limit', /asks to wait 3600 s/);
  assert.equal(server.requests.length, 1);
});

test('a dropped connection before any text is retried; after text it is an error naming it', async () => {
  const { server, model } = await setup();
  server.dropNext(0);
  const r = await model.generate({ messages: ask, sampling: {}, onText: () => undefined });
  assert.equal(r.text, answer);
  assert.equal(r.attempts, 2);

  server.dropNext();
  const again = await model.generate({ messages: ask, sampling: {} });
  assert.equal(again.attempts, 2, 'non-streaming drop is retried too');

  server.dropNext(3);
  const seen: string[] = [];
  await rejectsWith(
    model.generate({ messages: ask, sampling: {}, onText: (d) => seen.push(d) }),
    'unreachable',
    /broke mid-stream.*after \d+ characters/,
  );
  assert.equal(seen.length, 3);
});

test('unreachable port: a clear error naming the URL, without retrying for long', async () => {
  const probe = createServer();
  await new Promise<void>((res) => probe.listen(0, '127.0.0.1', res));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((res) => probe.close(() => res()));
  const m = await createModel(`openai:http://127.0.0.1:${port}/v1#x`, fast);
  await rejectsWith(
    m.generate({ messages: ask, sampling: {} }),
    'unreachable',
    new RegExp(`127\\.0\\.0\\.1:${port}/v1.*connection refused`),
  );
});

test('unknown model: the error lists what the server serves', async () => {
  const { model } = await setup({ models: ['qwen-7b', 'llama-8b'] }, fast, 'gpt-5');
  await rejectsWith(
    model.generate({ messages: ask, sampling: {} }),
    'unknown-model',
    /"gpt-5".*serves: qwen-7b, llama-8b/,
  );
  const { model: unlisted } = await setup({ models: ['qwen-7b'], listModels: false }, fast, 'gpt-5');
  await rejectsWith(unlisted.generate({ messages: ask, sampling: {} }), 'unknown-model', /does not list its models/);
});

test('a wrong base URL path is called what it is', async () => {
  const server = await startReplayServer();
  open.push(server);
  const m = await createModel(`openai:http://127.0.0.1:${server.port}/api#replay`, fast);
  await rejectsWith(
    m.generate({ messages: ask, sampling: {} }),
    'unreachable',
    /no chat-completions endpoint.*usually end in \/v1/,
  );
});

test(
  'auth: the key comes from the option, then QUARRY_API_KEY, then OPENAI_API_KEY; 401 is explained, never ' +
    'echoing the key',
  async () => {
    const secret = 'sk-test-0123456789';
    const { server, model } = await setup({ apiKey: secret }, { ...fast, env: { OPENAI_API_KEY: secret } });
    assert.equal((await model.generate({ messages: ask, sampling: {} })).text, answer);
    assert.equal(server.requests.at(-1)!.authorization, `Bearer ${secret}`);

    const preferQuarry = await createModel(server.spec(), {
      ...fast,
      env: { QUARRY_API_KEY: 'sk-wrong', OPENAI_API_KEY: secret },
    });
    const e = await rejectsWith(
      preferQuarry.generate({ messages: ask, sampling: {} }),
      'auth',
      /HTTP 401.*QUARRY_API_KEY was refused/,
    );
    assert.doesNotMatch(e.message, /sk-wrong/);

    const option = await createModel(server.spec(), { ...fast, apiKey: secret, env: { QUARRY_API_KEY: 'sk-wrong' } });
    assert.equal((await option.generate({ messages: ask, sampling: {} })).text, answer);

    const none = await createModel(server.spec(), fast);
    await rejectsWith(none.generate({ messages: ask, sampling: {} }), 'auth', /no API key was sent/);
  },
);

test('abort mid-stream rejects with an AbortError and frees the connection', async () => {
  const { server, model } = await setup({ chunkDelayMs: 20 });
  const ctl = new AbortController();
  const seen: string[] = [];
  await assert.rejects(
    model.generate({
      messages: ask,
      sampling: {},
      signal: ctl.signal,
      onText: (d) => {
        seen.push(d);
        if (seen.length === 2) ctl.abort();
      },
    }),
    (e: Error) => e.name === 'AbortError',
  );
  assert.equal(seen.length, 2);
  await closedByClient(server.requests.at(-1)!);
  // The server is still fine for the next call.
  server.options.chunkDelayMs = 0;
  assert.equal((await model.generate({ messages: ask, sampling: {} })).text, answer);
});

test('an already aborted signal rejects without a request', async () => {
  const { server, model } = await setup();
  await assert.rejects(model.generate({ messages: ask, sampling: {}, signal: AbortSignal.abort() }), {
    name: 'AbortError',
  });
  assert.equal(server.requests.length, 0);
});

test('timeout: a server that never answers gives a timeout error', async () => {
  const { server, model } = await setup();
  server.hangNext();
  await rejectsWith(
    model.generate({ messages: ask, sampling: {}, timeoutMs: 200 }),
    'timeout',
    /no complete answer from .* within 200 ms/,
  );
});

test('malformed SSE data and a truncated JSON body are bad-response errors quoting what came', async () => {
  const { server, model } = await setup();
  server.corruptNext();
  await rejectsWith(
    model.generate({ messages: ask, sampling: {}, onText: () => undefined }),
    'bad-response',
    /stream event that is not JSON: \{"choices"/,
  );
  server.corruptNext();
  await rejectsWith(model.generate({ messages: ask, sampling: {} }), 'bad-response', /response body that is not JSON/);
});

test(
  "an unmatched conversation gets the replay server's " + 'explanation; a default answer covers it when set',
  async () => {
    const { server, model } = await setup();
    const other: ChatMessage[] = [{ role: 'user', content: 'List the stadiums.' }];
    await rejectsWith(
      model.generate({ messages: other, sampling: {} }),
      'server',
      /HTTP 400.*no scripted response.*List the stadiums/,
    );
    server.options.defaultResponse = 'I do not know.';
    assert.equal((await model.generate({ messages: other, sampling: {} })).text, 'I do not know.');
  },
);

test('close() ends calls in flight and refuses new ones', async () => {
  const { server, model } = await setup();
  server.hangNext();
  const pending = model.generate({ messages: ask, sampling: {} });
  await new Promise((r) => setTimeout(r, 50));
  await model.close();
  await rejectsWith(pending, 'server', /closed/);
  await rejectsWith(model.generate({ messages: ask, sampling: {} }), 'server', /has been closed/);
});

test('ChatModel.spec is the spec string it was made from', async () => {
  const { server, model } = await setup();
  const m: ChatModel = model;
  assert.equal(m.spec, server.spec());
});

test('an error thrown by onText reaches the caller unchanged, and is not retried', async () => {
  const { server, model } = await setup();
  const mine = new Error('the UI went away');
  await assert.rejects(
    model.generate({
      messages: ask,
      sampling: {},
      onText: () => {
        throw mine;
      },
    }),
    (e: unknown) => e === mine,
  );
  assert.equal(server.requests.length, 1);
  const whole = await createModel(server.spec(), { ...fast, stream: false });
  await assert.rejects(
    whole.generate({
      messages: ask,
      sampling: {},
      onText: () => {
        throw mine;
      },
    }),
    (e: unknown) => e === mine,
  );
  assert.equal(server.requests.at(-1)!.body!.stream, false);
});
