// The openai backend's own cost, against the replay server run as a separate process (scripts/replay-server.mjs, so
// the server's work does not share this event loop): calls per second and latency, non-streamed and streamed, one
// at a time and 8 at once; streaming throughput of a long answer (chunks per second through SSE parsing and onText);
// and what a client-side stop string costs while streaming.
// QUARRY_BENCH_CALLS=N sets the calls per scenario (default 400).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { repoRoot, writeResult, percentile } from './common';
import { createModel, type ChatMessage, type ChatModel, type GenerateRequest } from '../src/core/models';

const calls = Number(process.env.QUARRY_BENCH_CALLS ?? 400);
const shortAnswer = 'Let me look. <sql>SELECT count(*) FROM singer WHERE age > 30</sql>';
const longAnswer = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ');

async function startServer(): Promise<{ url: string; stop(): void }> {
  const script = join(tmpdir(), `quarry-openai-bench-${process.pid}.json`);
  writeFileSync(
    script,
    JSON.stringify({
      models: ['bench'],
      entries: [{ match: 'LONG', response: longAnswer }, { response: shortAnswer }],
    }),
  );
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'scripts', 'replay-server.mjs'), '--script', script, '--port', '0'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`replay server exited with ${code}; run the build first`)));
  });
  const url = /^listening (\S+)$/.exec(line)?.[1];
  if (!url) throw new Error(`replay server said ${JSON.stringify(line)}`);
  return { url, stop: () => child.kill('SIGTERM') };
}

interface Scenario {
  name: string;
  concurrency: number;
  request: () => GenerateRequest;
}

async function run(model: ChatModel, s: Scenario, n: number): Promise<Record<string, number>> {
  const lat: number[] = [];
  const ttft: number[] = [];
  let chunks = 0;
  let next = 0;
  const t0 = performance.now();
  async function worker(): Promise<void> {
    while (next < n) {
      next++;
      const req = s.request();
      const onText = req.onText;
      if (onText)
        req.onText = (d) => {
          chunks++;
          onText(d);
        };
      const r = await model.generate(req);
      lat.push(r.timings.totalMs);
      if (r.timings.firstTokenMs !== null) ttft.push(r.timings.firstTokenMs);
    }
  }
  await Promise.all(Array.from({ length: s.concurrency }, worker));
  const wall = performance.now() - t0;
  lat.sort((a, b) => a - b);
  ttft.sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    calls: n,
    concurrency: s.concurrency,
    wallMs: round(wall),
    callsPerSec: round((n / wall) * 1000),
    p50Ms: round(percentile(lat, 50)),
    p95Ms: round(percentile(lat, 95)),
    maxMs: round(lat.at(-1) ?? NaN),
    firstTokenP50Ms: round(percentile(ttft, 50)),
    ...(chunks > 0 ? { chunks, chunksPerSec: round((chunks / wall) * 1000) } : {}),
  };
}

async function main(): Promise<void> {
  const server = await startServer();
  try {
    const model = await createModel(`openai:${server.url}#bench`, { env: {} });
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You write SQLite.' },
      { role: 'user', content: 'How many singers are older than 30?' },
    ];
    const long: ChatMessage[] = [{ role: 'user', content: 'LONG' }];
    const stop = ['</sql>'];
    const manyStops = ['</a>', '</b>', '</c>', '</d>', '</sql>'];
    const scenarios: Array<Scenario & { n: number }> = [
      { name: 'non-stream, sequential', concurrency: 1, n: calls, request: () => ({ messages, sampling: { stop } }) },
      { name: 'non-stream, 8 concurrent', concurrency: 8, n: calls, request: () => ({ messages, sampling: { stop } }) },
      {
        name: 'stream, sequential',
        concurrency: 1,
        n: calls,
        request: () => ({ messages, sampling: { stop }, onText: () => undefined }),
      },
      {
        name: 'stream, 8 concurrent',
        concurrency: 8,
        n: calls,
        request: () => ({ messages, sampling: { stop }, onText: () => undefined }),
      },
      {
        name: 'stream, 5 stops (1 cut client-side)',
        concurrency: 1,
        n: calls,
        request: () => ({ messages, sampling: { stop: manyStops }, onText: () => undefined }),
      },
      {
        name: 'stream 2000-token answer',
        concurrency: 1,
        n: Math.max(5, Math.round(calls / 20)),
        request: () => ({ messages: long, sampling: {}, onText: () => undefined }),
      },
      {
        name: 'stream 2000-token answer, 12 client-side stops that never match',
        concurrency: 1,
        n: Math.max(5, Math.round(calls / 20)),
        request: () => ({
          messages: long,
          sampling: { stop: ['<x1>', '<x2>', '<x3>', '<x4>', ...Array.from({ length: 12 }, (_, i) => `never${i}>`)] },
          onText: () => undefined,
        }),
      },
    ];
    await run(model, scenarios[0], 50); // warm-up: connections, JIT
    const results: Record<string, Record<string, number>> = {};
    for (const s of scenarios) {
      results[s.name] = await run(model, s, s.n);
      console.log(s.name.padEnd(66), JSON.stringify(results[s.name]));
    }
    await model.close();
    writeResult('openai', {
      server: 'replay server as a separate process on 127.0.0.1',
      shortAnswerTokens: 11,
      longAnswerTokens: 2000,
      scenarios: results,
    });
  } finally {
    server.stop();
  }
}

main().catch((e: unknown) => {
  console.error(`bench openai: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
