// A short time limit names the real failure (issue 9): a server that answers HTTP 500, or resets the connection, is
// reported as such when the limit runs out while retrying — not as a bare "timed out".
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAIModel } from '../../../src/core/models/openai';
import { ModelError } from '../../../src/core/models/types';
import { parseModelSpec } from '../../../src/core/models/spec';

const server = createServer((req, res) => {
  if (req.url?.includes('reset')) {
    req.socket.destroy();
    return;
  }
  res.writeHead(500, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { message: 'the GPU fell over' } }));
});
let port = 0;
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

function model(path: string) {
  const spec = parseModelSpec(`openai:http://127.0.0.1:${port}/${path}#m`);
  if (spec.kind !== 'openai') throw new Error('spec');
  return createOpenAIModel(spec, { timeoutMs: 300, retry: { baseDelayMs: 500, maxRetries: 4 } });
}

test('HTTP 500 until the limit: the error is the server failure, not "timed out"', async () => {
  const m = model('v1');
  await assert.rejects(m.generate({ messages: [{ role: 'user', content: 'x' }], sampling: {} }), (e: Error) => {
    assert.ok(e instanceof ModelError);
    assert.notEqual(e.kind, 'timeout');
    assert.match(e.message, /500/);
    assert.match(e.message, /limit ran out while retrying/);
    return true;
  });
  await m.close();
});

test('connection resets until the limit: named as the connection failure', async () => {
  const m = model('reset/v1');
  await assert.rejects(m.generate({ messages: [{ role: 'user', content: 'x' }], sampling: {} }), (e: Error) => {
    assert.ok(e instanceof ModelError);
    assert.notEqual(e.kind, 'timeout');
    assert.doesNotMatch(e.message, /^no complete answer/);
    return true;
  });
  await m.close();
});
