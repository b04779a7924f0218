// Tests of models/sse: events split across chunks, CRLF and CR line ends, comments and other fields skipped;
// multi-line data joins with \\n; a last event without its blank line still counts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sseData } from '../../../src/core/models/sse';

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const s of chunks) c.enqueue(enc.encode(s));
      c.close();
    },
  });
}

async function collect(chunks: string[]): Promise<string[]> {
  const out: string[] = [];
  for await (const d of sseData(streamOf(chunks))) out.push(d);
  return out;
}

test('events split across chunks, CRLF and CR line ends, comments and other fields skipped', async () => {
  assert.deepEqual(
    await collect([
      'data: {"a"',
      ':1}\n\n: keep-alive\n\nevent: x\r\nid: 3\r\ndata:{"b":2}\r\n\r',
      '\ndata: [DONE]\r\r',
    ]),
    ['{"a":1}', '{"b":2}', '[DONE]'],
  );
});

test('multi-line data joins with \\n; a last event without its blank line still counts', async () => {
  assert.deepEqual(await collect(['data: one\ndata: two\n\ndata: tail']), ['one\ntwo', 'tail']);
});

test('a multi-byte character split between chunks survives', async () => {
  const bytes = new TextEncoder().encode('data: café\n\n');
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice(0, 10));
      c.enqueue(bytes.slice(10));
      c.close();
    },
  });
  const out: string[] = [];
  for await (const d of sseData(stream)) out.push(d);
  assert.deepEqual(out, ['café']);
});
