// Shared by the benchmarks: where the data is, and how results are written.
import { writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { cpus, totalmem } from 'node:os';

export const repoRoot = process.env.QUARRY_ROOT ?? resolve(__dirname, '..', '..');
export const spiderDir = process.env.SPIDER_DIR ?? resolve(repoRoot, '..', 'shared', 'data', 'spider-train');
export const resultsDir = process.env.QUARRY_BENCH_RESULTS ?? join(repoRoot, 'bench', 'results');

/** Exits with a clear message when the Spider data a benchmark needs is not beside the repository. */
export function requireSpider(): string {
  if (!existsSync(join(spiderDir, 'train_spider.json'))) {
    console.error(`bench: Spider train data not found at ${spiderDir} (set SPIDER_DIR)`);
    process.exit(2);
  }
  return spiderDir;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Writes bench/results/<name>.json with the machine it ran on. */
export function writeResult(name: string, result: Record<string, unknown>): void {
  mkdirSync(resultsDir, { recursive: true });
  const out = {
    ...result,
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model,
      memGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    at: new Date().toISOString(),
  };
  writeFileSync(join(resultsDir, `${name}.json`), JSON.stringify(out, null, 2) + '\n');
  console.log(`wrote ${join(resultsDir, `${name}.json`)}`);
}
