// `quarry data rl` at synthetic-corpus scale: a generated Spider-format dataset of DATA_RL_BENCH_N questions (250,000
// by default) over one small fixture database (test/helpers/rlCorpus.ts), made into RL data by the real CLI
// (dist/cli.js) in a child process, as a user runs it. Measured: wall time, records written per second, and the CLI
// process's peak RSS (the SQL workers are separate processes and not counted); then train.jsonl's lines and
// train.parquet's rows and row groups (from its footer) are checked against the count the CLI reports. Before the
// output was streamed, this failed at about 200,000 questions with `RangeError: Invalid string length`.
import { spawn } from 'node:child_process';
import { createReadStream, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { asyncBufferFromFile, parquetMetadataAsync } from 'hyparquet';
import { writeRlCorpus } from '../test/helpers/rlCorpus';
import { repoRoot, writeResult } from './common';

const N = Number(process.env.DATA_RL_BENCH_N ?? 250_000);

/** Runs the CLI with a preload that writes the process's peak RSS (KiB) to `rssFile` on exit. */
function runCli(args: string[], rssFile: string, preload: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
    const child = spawn(process.execPath, ['-r', preload, join(repoRoot, 'dist', 'cli.js'), ...args], {
      env: { ...process.env, QUARRY_BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '',
      stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      // Keep the tail only: the progress bars redraw many times.
      stderr = (stderr + d).slice(-20_000);
    });
    child.on('close', (code) => res({ code, stdout, stderr }));
  });
}

async function countLines(file: string): Promise<number> {
  let n = 0;
  for await (const _ of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) n++;
  return n;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-data-rl-bench-'));
  try {
    const g0 = performance.now();
    const corpus = await writeRlCorpus(dir, N);
    const generateS = (performance.now() - g0) / 1000;
    const preload = join(dir, 'rss-preload.cjs');
    writeFileSync(
      preload,
      "process.on('exit', () => require('node:fs').writeFileSync(process.env.QUARRY_BENCH_RSS_FILE, " +
        'String(process.resourceUsage().maxRSS)));\n',
    );
    const out = join(dir, 'out');
    const rssFile = join(dir, 'rss.txt');
    const t0 = performance.now();
    const r = await runCli(
      [
        'data',
        'rl',
        '--dataset',
        `spider:${corpus.file}`,
        '--db-dir',
        corpus.dbDir,
        '--protocol',
        'skyrl',
        '--out',
        out,
      ],
      rssFile,
      preload,
    );
    const seconds = (performance.now() - t0) / 1000;
    const peakRssMiB = Math.round(Number(readFileSync(rssFile, 'utf8')) / 1024);
    const base = { questions: N, datasetBytes: statSync(corpus.file).size, generateS: +generateS.toFixed(1) };
    if (r.code !== 0) {
      const error = r.stderr.split('\n').find((l) => /Error/.test(l)) ?? r.stderr.slice(-500);
      console.error(`quarry data rl exited ${r.code}: ${error}`);
      writeResult('dataRl', { ...base, ok: false, exitCode: r.code, error, seconds, peakRssMiB });
      process.exitCode = 1;
      return;
    }
    const written = Number(/wrote (\d+) of/.exec(r.stdout)?.[1]);
    const expected = N - corpus.failing;
    const jsonlLines = await countLines(join(out, 'train.jsonl'));
    const meta = await parquetMetadataAsync(await asyncBufferFromFile(join(out, 'train.parquet')));
    const parquetRows = Number(meta.num_rows);
    const complete = written === expected && jsonlLines === expected && parquetRows === expected;
    const result = {
      ...base,
      ok: complete,
      written,
      seconds: +seconds.toFixed(1),
      recordsPerSec: Math.round(written / seconds),
      peakRssMiB,
      jsonlBytes: statSync(join(out, 'train.jsonl')).size,
      parquetBytes: statSync(join(out, 'train.parquet')).size,
      parquetRowGroups: meta.row_groups.length,
      loadavg1: +loadavg()[0].toFixed(2),
    };
    console.log(result);
    writeResult('dataRl', result);
    if (!complete) {
      console.error(
        `incomplete: expected ${expected} records, CLI ${written}, jsonl ${jsonlLines}, parquet ${parquetRows}`,
      );
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
