// Model responses have a size cap (issue 9, item 7): a server that streams without end (here 200 MB offered) is read
// only up to maxResponseChars; the result keeps what came before, finishes with 'length' and is marked over-long, and
// the agent loop records the turn as over-long. A non-streamed body past the cap is refused with a clear error.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAIModel } from '../../../src/core/models/openai';
import { ModelError } from '../../../src/core/models/types';
import { parseModelSpec } from '../../../src/core/models/spec';
import { runEpisode } from '../../../src/core/agent/loop';
import { SchemaCache } from '../../../src/core/agent/env';
import { createSqlPool } from '../../../src/core/db/pool';
import { buildDb } from '../../helpers/fixtures';

let sentBytes = 0;
function streamForever(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = { choices: [{ index: 0, delta: { content: 'x'.repeat(8192) }, finish_reason: null }] };
  const piece = `data: ${JSON.stringify(event)}\n\n`;
  let left = 200 * 2 ** 20;
  const pump = (): void => {
    while (left > 0) {
      left -= piece.length;
      sentBytes += piece.length;
      if (!res.write(piece)) {
        res.once('drain', pump);
        return;
      }
    }
    res.end('data: [DONE]\n\n');
  };
  res.on('close', () => {
    left = 0;
  });
  pump();
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d: Buffer) => {
    body += String(d);
  });
  req.on('end', () => {
    const stream = (JSON.parse(body) as { stream?: boolean }).stream === true;
    if (stream) return streamForever(res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        choices: [
          { index: 0, message: { role: 'assistant', content: 'y'.repeat(2 * 2 ** 20) }, finish_reason: 'stop' },
        ],
      }),
    );
  });
});
let spec: Extract<ReturnType<typeof parseModelSpec>, { kind: 'openai' }>;
before(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const parsed = parseModelSpec(`openai:http://127.0.0.1:${(server.address() as AddressInfo).port}/v1#endless`);
  if (parsed.kind !== 'openai') throw new Error('not an openai spec');
  spec = parsed;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

test('a streamed response past the cap is cut there, finishes with length and is marked over-long', async () => {
  sentBytes = 0;
  const model = createOpenAIModel(spec, { maxResponseChars: 100_000, retry: { maxRetries: 0 } });
  const r = await model.generate({ messages: [{ role: 'user', content: 'go' }], sampling: {}, onText: () => {} });
  assert.equal(r.text.length, 100_000);
  assert.equal(r.finishReason, 'length');
  assert.equal(r.overLong, true);
  assert.ok(sentBytes < 50 * 2 ** 20, `the client stopped reading (server wrote ${sentBytes} bytes of 200 MB)`);
  await model.close();
});

test('a non-streamed body past the cap is refused with a clear error', async () => {
  const model = createOpenAIModel(spec, { maxResponseChars: 100_000, retry: { maxRetries: 0 }, stream: false });
  await assert.rejects(
    model.generate({ messages: [{ role: 'user', content: 'go' }], sampling: {} }),
    (e: Error) => e instanceof ModelError && e.kind === 'bad-response' && /passed \d+ bytes/.test(e.message),
  );
  await model.close();
});

test('the agent loop records the turn as over-long (and the record stays valid)', async () => {
  const pool = createSqlPool({ size: 1, spares: 0 });
  const model = createOpenAIModel(spec, { maxResponseChars: 50_000, retry: { maxRetries: 0 } });
  try {
    const record = await runEpisode({
      task: { question: 'How many authors?', dbPath: buildDb('bookshop') },
      protocolName: 'skyrl',
      model,
      pool,
      config: { maxTurns: 1 },
      schemaCache: new SchemaCache(),
      onEvent: () => {},
    });
    assert.equal(record.turns[0].overLong, true);
    assert.equal(record.turns[0].assistant.length >= 50_000, true);
    assert.equal(record.turns[0].finishReason, 'length');
  } finally {
    await model.close();
    await pool.close();
  }
});
