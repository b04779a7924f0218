// The replay server speaks the OpenAI protocol as vLLM does; checked here with plain fetch, and as a process.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startReplayServer, loadReplayScript, tokenize, type ReplayServer } from '../../support/openaiReplayServer';
import { repoRoot, tempDir } from '../../helpers/fixtures';

const servers: ReplayServer[] = [];
after(async () => {
  for (const s of servers) await s.close();
});

async function start(...args: Parameters<typeof startReplayServer>): Promise<ReplayServer> {
  const s = await startReplayServer(...args);
  servers.push(s);
  return s;
}

async function chat(
  server: ReplayServer,
  body: Record<string, unknown>,
): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'replay', ...body }),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* a stream */
  }
  return { status: res.status, json, text };
}

const user = (content: string) => [{ role: 'user', content }];

test('tokens are words with their leading whitespace, and join back to the text', () => {
  assert.deepEqual(tokenize('SELECT a  FROM t \n'), ['SELECT', ' a', '  FROM', ' t', ' \n']);
  assert.deepEqual(tokenize(''), []);
});

test('/v1/models lists the served models', async () => {
  const s = await start({ models: ['a', 'b'] });
  const res = await fetch(`${s.url}/models`);
  const json = (await res.json()) as { object: string; data: Array<{ id: string; object: string }> };
  assert.equal(json.object, 'list');
  assert.deepEqual(
    json.data.map((m) => [m.id, m.object]),
    [
      ['a', 'model'],
      ['b', 'model'],
    ],
  );
});

test('non-streaming: a chat.completion with stop_reason, finish_reason and usage', async () => {
  const s = await start({ script: [{ match: 'q1', response: 'one two</s> three' }] });
  const { status, json } = await chat(s, { messages: user('q1'), stop: ['</s>'] });
  assert.equal(status, 200);
  assert.equal(json.object, 'chat.completion');
  assert.deepEqual(json.choices[0].message, { role: 'assistant', content: 'one two' });
  assert.equal(json.choices[0].finish_reason, 'stop');
  assert.equal(json.choices[0].stop_reason, '</s>');
  assert.deepEqual(json.usage, { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  const natural = await chat(s, { messages: user('q1'), max_tokens: 10 });
  assert.equal(natural.json.choices[0].message.content, 'one two</s> three');
  assert.equal(natural.json.choices[0].stop_reason, null);
  const cut = await chat(s, { messages: user('q1'), max_tokens: 1 });
  assert.deepEqual([cut.json.choices[0].message.content, cut.json.choices[0].finish_reason], ['one', 'length']);
  s.options.stopReason = false;
  const plain = await chat(s, { messages: user('q1'), stop: '</s>' });
  assert.equal('stop_reason' in plain.json.choices[0], false);
});

test('streaming: role chunk, one chunk a token, a finish chunk, usage when asked, [DONE]', async () => {
  const s = await start({ script: [{ response: 'a b c' }] });
  const { text } = await chat(s, { messages: user('x'), stream: true, stream_options: { include_usage: true } });
  const events = text
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => e.replace(/^data: /, ''));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
  assert.deepEqual(
    chunks.slice(1, 4).map((c) => c.choices[0].delta.content),
    ['a', ' b', ' c'],
  );
  assert.equal(chunks[4].choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks[5].choices, []);
  assert.equal(chunks[5].usage.completion_tokens, 3);
  const noUsage = await chat(s, { messages: user('x'), stream: true });
  assert.doesNotMatch(noUsage.text, /"usage"/);
});

test('script matching: substring or regex, on a role, by turn, by model, queues used up in order', async () => {
  const s = await start({
    models: ['m1', 'm2'],
    script: [
      { match: { regex: '^you are terse', flags: 'i' }, role: 'system', response: 'terse' },
      { match: 'stadium', turn: 1, response: 'stadium turn 1' },
      { match: 'stadium', model: 'm2', response: 'stadium on m2' },
      { match: 'stadium', responses: ['first', 'second'] },
    ],
  });
  const ask = async (messages: unknown[], model = 'm1') => (await chat(s, { model, messages })).json;
  assert.equal(
    (
      await ask([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'stadium?' },
      ])
    ).choices[0].message.content,
    'terse',
  );
  assert.equal(
    (await ask([{ role: 'user', content: 'You are terse. stadium?' }])).choices[0].message.content,
    'first',
    'role: system only looks at system messages',
  );
  assert.equal((await ask(user('stadium?'))).choices[0].message.content, 'second');
  const spent = await ask(user('stadium?'));
  assert.match(spent.error.message, /no scripted response.*assistant turn 0.*stadium\?/);
  assert.equal((await ask(user('stadium?'), 'm2')).choices[0].message.content, 'stadium on m2');
  const turn1 = [...user('stadium?'), { role: 'assistant', content: 'x' }, { role: 'user', content: 'more' }];
  assert.equal((await ask(turn1)).choices[0].message.content, 'stadium turn 1');
});

test("requests are validated and unknown models get vLLM's 404", async () => {
  const s = await start({ defaultResponse: 'd' });
  assert.equal((await chat(s, { messages: [] })).status, 400);
  assert.equal((await chat(s, { messages: [{ role: 'wizard', content: 'x' }] })).status, 400);
  assert.equal((await chat(s, { messages: user('x'), n: 2 })).status, 400);
  const unknown = await chat(s, { model: 'gpt-5', messages: user('x') });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.error.message, 'The model `gpt-5` does not exist.');
  s.options.anyModel = true;
  assert.equal((await chat(s, { model: 'gpt-5', messages: user('x') })).json.choices[0].message.content, 'd');
});

test('failNext answers with the status and Retry-After, then recovers', async () => {
  const s = await start({ defaultResponse: 'ok' });
  s.failNext(2, 429, { retryAfter: 2 });
  const first = await fetch(`${s.url}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ model: 'replay', messages: user('x') }),
  });
  assert.equal(first.status, 429);
  assert.equal(first.headers.get('retry-after'), '2');
  assert.equal((await chat(s, { messages: user('x') })).status, 429);
  assert.equal((await chat(s, { messages: user('x') })).status, 200);
  assert.equal(s.requests.length, 3);
});

test('script files: JSON (array or object) and JSONL, with clear errors for bad ones', () => {
  const dir = tempDir();
  const write = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  assert.equal(loadReplayScript(write('a.json', '[{"match": "x", "response": "y"}]')).entries.length, 1);
  const obj = loadReplayScript(
    write(
      'b.json',
      '{"entries": [{"match": {"regex": "x+", "flags": "i"}, "responses": ["a", "b"]}], "default": "d", ' +
        '"models": ["m"]}',
    ),
  );
  assert.deepEqual([obj.default, obj.models, obj.entries[0].responses], ['d', ['m'], ['a', 'b']]);
  assert.equal(
    loadReplayScript(write('c.jsonl', '{"match": "x", "response": "1"}\n\n{"turn": 1, "response": "2"}\n')).entries
      .length,
    2,
  );
  assert.throws(() => loadReplayScript(write('d.jsonl', '{"response": "1"}\n{oops\n')), /d\.jsonl: line 2 is not JSON/);
  assert.throws(
    () => loadReplayScript(write('e.json', '[{"match": "x"}]')),
    /entry 1 has neither "response" nor "responses"/,
  );
  assert.throws(
    () => loadReplayScript(write('f.json', '[{"match": {"regex": "("}, "response": "r"}]')),
    /entry 1: bad regex/,
  );
  assert.throws(
    () => loadReplayScript(write('g.json', '[{"turn": -1, "response": "r"}]')),
    /"turn" must be a whole number/,
  );
});

test('scripts/replay-server.mjs serves a script file as its own process', async () => {
  assert.ok(
    existsSync(join(repoRoot, 'dist', 'replayServer.js')),
    'dist/replayServer.js is built by scripts/build.mjs',
  );
  const script = join(tempDir(), 's.jsonl');
  writeFileSync(script, '{"match": "singers", "response": "SELECT count(*) FROM singer"}\n');
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'scripts', 'replay-server.mjs'), '--script', script, '--port', '0', '--model', 'q'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  try {
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`replay-server exited with ${code}`)));
    });
    const url = /^listening (http:\/\/127\.0\.0\.1:\d+\/v1)$/.exec(line)?.[1];
    assert.ok(url, line);
    const res = await fetch(`${url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'q', messages: user('How many singers?') }),
    });
    const json = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    assert.equal(json.choices[0].message.content, 'SELECT count(*) FROM singer');
  } finally {
    child.kill('SIGTERM');
  }
  const bad = spawn(
    process.execPath,
    [join(repoRoot, 'scripts', 'replay-server.mjs'), '--script', join(tempDir(), 'missing.json')],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  bad.stderr!.on('data', (d) => {
    err += d;
  });
  const code = await new Promise<number | null>((resolve) => bad.once('exit', resolve));
  assert.equal(code, 1);
  assert.match(err, /missing\.json/);
});
