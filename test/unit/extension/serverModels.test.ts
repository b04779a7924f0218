// Listing an OpenAI-compatible server's models, against a real server on 127.0.0.1.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { startReplayServer } from '../../support/openaiReplayServer';
import { listServerModels } from '../../../src/extension/models/serverModels';
import { ModelError } from '../../../src/core/models/types';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of closers) await c();
});

function kind(k: string) {
  return (err: unknown) => err instanceof ModelError && err.kind === k;
}

test('lists the served models, with the key when the server wants one', async () => {
  const server = await startReplayServer({ models: ['qwen-7b', 'tiny'], apiKey: 'k-123' });
  closers.push(() => server.close());
  assert.deepEqual(await listServerModels(server.url, { apiKey: 'k-123' }), ['qwen-7b', 'tiny']);
  assert.deepEqual(await listServerModels(`${server.url}/`, { apiKey: 'k-123' }), ['qwen-7b', 'tiny']);
  await assert.rejects(
    listServerModels(server.url),
    (e: unknown) => kind('auth')(e) && /Set API Key/.test((e as Error).message),
  );
  await assert.rejects(listServerModels(server.url, { apiKey: 'wrong' }), kind('auth'));
});

test('a server that is down, a wrong path, and a server that is not OpenAI-compatible', async () => {
  const probe = createServer((req, res) => {
    if (req.url === '/v1/models') {
      res.setHeader('content-type', 'text/html');
      res.end('<html>hello</html>');
      return;
    }
    if (req.url === '/json/models') {
      res.setHeader('content-type', 'application/json');
      res.end('{"models": []}');
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  });
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => probe.close(() => r())));
  const port = (probe.address() as { port: number }).port;
  await assert.rejects(listServerModels(`http://127.0.0.1:${port}/v1`), kind('bad-response'));
  await assert.rejects(
    listServerModels(`http://127.0.0.1:${port}/json`),
    (e: unknown) => kind('bad-response')(e) && /"data"/.test((e as Error).message),
  );
  await assert.rejects(
    listServerModels(`http://127.0.0.1:${port}`),
    (e: unknown) => kind('unreachable')(e) && /\/v1/.test((e as Error).message),
  );
  // A port that was just free: nobody listens there.
  const gone = createServer();
  await new Promise<void>((r) => gone.listen(0, '127.0.0.1', r));
  const deadPort = (gone.address() as { port: number }).port;
  await new Promise<void>((r) => gone.close(() => r()));
  await assert.rejects(
    listServerModels(`http://127.0.0.1:${deadPort}/v1`),
    (e: unknown) => kind('unreachable')(e) && /is the server running/.test((e as Error).message),
  );
});

test('cancelling the listing rejects with AbortError', async () => {
  const server = await startReplayServer({ models: ['m'], delayMs: 5000 });
  closers.push(() => server.close());
  const ac = new AbortController();
  const p = listServerModels(server.url, { signal: ac.signal, timeoutMs: 60_000 });
  ac.abort();
  await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
});
