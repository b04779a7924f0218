// The onnx backend on the repository's tiny model: prefill and decode tokens/s, how much of a generation's time is
// spent outside session.run (sampling, decoding text, stop checks, tensors: target < 10%), and how long the main
// thread's event loop is held up while the worker generates (it should not be).
// QUARRY_ONNX_MODEL=<dir> benchmarks another model directory; QUARRY_BENCH_ROUNDS=N repeats the prompt set (default 3).
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { createOnnxModel, type OnnxGenerateResult } from '../src/core/models/onnx';
import type { ChatMessage } from '../src/core/models/types';
import { repoRoot, writeResult } from './common';

const modelDir = process.env.QUARRY_ONNX_MODEL ?? join(repoRoot, 'media', 'models', 'tiny-sql');
const rounds = Math.max(1, Number(process.env.QUARRY_BENCH_ROUNDS ?? 3));
const maxTokens = 160;

function prompts(): ChatMessage[][] {
  const ref = join(modelDir, 'reference.json');
  if (!existsSync(ref)) {
    console.error(
      `bench onnx: ${ref} not found (set QUARRY_ONNX_MODEL to a model made by scripts/tiny-model/train.py)`,
    );
    process.exit(2);
  }
  return (JSON.parse(readFileSync(ref, 'utf8')) as { cases: { messages: ChatMessage[] }[] }).cases.map(
    (c) => c.messages,
  );
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function measure(threads: number, set: ChatMessage[][]) {
  const t0 = performance.now();
  const model = await createOnnxModel(modelDir, { threads });
  const loadMs = performance.now() - t0;
  await model.generate({ messages: set[0], sampling: { maxTokens: 4 } }); // warm-up: first-run allocations
  const results: OnnxGenerateResult[] = [];
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  for (let r = 0; r < rounds; r++) {
    for (const messages of set)
      results.push(await model.generate({ messages, sampling: { temperature: 0, maxTokens } }));
  }
  lag.disable();
  await model.close();
  const o = results.map((r) => r.onnx);
  const promptTokens = sum(o.map((x) => x.promptTokens));
  const decodeSteps = sum(o.map((x) => Math.max(0, x.completionTokens - 1)));
  const prefillMs = sum(o.map((x) => x.prefillMs));
  const decodeRunMs = sum(o.map((x) => x.decodeRunMs));
  const loopMs = sum(o.map((x) => x.loopMs));
  const runMs = sum(o.map((x) => x.runMs));
  const decodeWallMs = sum(o.map((x) => x.loopMs - x.encodeMs - x.prefillMs));
  const totalMs = sum(results.map((r) => r.timings.totalMs));
  return {
    threads,
    generations: results.length,
    loadMs: round(loadMs),
    promptTokens,
    completionTokens: sum(o.map((x) => x.completionTokens)),
    prefillTokensPerSec: round(promptTokens / (prefillMs / 1000)),
    decodeTokensPerSec: round(decodeSteps / (decodeWallMs / 1000)),
    decodeRunOnlyTokensPerSec: round(decodeSteps / (decodeRunMs / 1000)),
    outsideRunShare: round((loopMs - runMs) / loopMs, 4),
    outsideRunShareDecode: round((decodeWallMs - decodeRunMs) / decodeWallMs, 4),
    encodeMsMean: round(sum(o.map((x) => x.encodeMs)) / o.length, 2),
    workerToCallerOverheadMs: round((totalMs - loopMs) / results.length, 2),
    mainThreadEventLoopDelayMaxMs: round(lag.max / 1e6, 1),
    mainThreadEventLoopDelayP99Ms: round(lag.percentile(99) / 1e6, 1),
  };
}

async function main() {
  const set = prompts();
  // Other work on the machine slows every number here; the load average says how much there was.
  const loadBefore = loadavg()[0];
  const runs = [];
  for (const threads of [1, 2]) {
    const r = await measure(threads, set);
    console.log(JSON.stringify(r));
    runs.push(r);
  }
  writeResult('onnx', {
    model: modelDir,
    rounds,
    prompts: set.length,
    maxTokens,
    runs,
    rssMiB: round(process.memoryUsage().rss / 2 ** 20),
    loadAverage1m: { before: round(loadBefore, 2), after: round(loadavg()[0], 2) },
  });
}

main().catch((err) => {
  console.error(`bench onnx: ${(err as Error).message}`);
  process.exit(1);
});
