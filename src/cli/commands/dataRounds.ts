// `quarry data distill` and `quarry data self-taught`: SFT data made by running a model over a dataset first (a
// `quarry bench` run into OUT/run, resumable with --resume, with its progress bar), then selecting.
// - distill (SQL-Trail App. A.6): a strong teacher's trajectories, the correct ones, medium and hard first.
// - self-taught (MTSQL-R1 §3.2.2, one round of Algorithm 1): N rollouts at T = 0.7 (default 20), S1 EX ∧ EM, S2
//   difficulty-aware reject sampling (src/core/training/selfTaught.ts); the questions solved this round are listed in
//   OUT/self-taught.json, and the next round drops them with --exclude OUT/self-taught.json (S4). The SFT step (S3)
//   is the trainer's: python -m quarry_trainer.train.sft on OUT/sft.jsonl.
import { parseArgs } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CliIO } from '../command';
import { EXIT, UsageError } from '../command';
import { benchCommand } from './bench';
import { makeSftData, SFT_FILES } from '../../app/data/sft';
import { DataInputError } from '../../app/data/errors';
import { openTrajectoryFile } from '../../app/trajectoryFiles';
import { TrajectoryWriter } from '../../core/trajectories/writer';
import { selectRollouts, type Rollout } from '../../core/training/selfTaught';
import { mulberry32 } from '../../core/util/random';
import { stringExactMatch } from '../../core/rewards/terms/mtsqlr1';
import type { BenchReport } from '../../core/datasetRuns';

const BENCH_FLAGS = {
  dataset: { type: 'string' },
  'db-dir': { type: 'string' },
  model: { type: 'string' },
  protocol: { type: 'string' },
  samples: { type: 'string' },
  temperature: { type: 'string' },
  'max-turns': { type: 'string' },
  limit: { type: 'string' },
  jobs: { type: 'string' },
  out: { type: 'string' },
  resume: { type: 'boolean' },
} as const;

function benchArgs(values: Record<string, string | boolean | undefined>, runDir: string, extra: string[]): string[] {
  const out: string[] = [];
  for (const k of [
    'dataset',
    'db-dir',
    'model',
    'protocol',
    'samples',
    'temperature',
    'max-turns',
    'limit',
    'jobs',
  ] as const) {
    if (typeof values[k] === 'string') out.push(`--${k}`, values[k] as string);
  }
  if (values.resume) out.push('--resume');
  return [...out, ...extra, '--out', runDir];
}

function fail(io: CliIO, sub: string, message: string): number {
  io.stderr.write(`quarry data ${sub}: ${message}\n`);
  return EXIT.badInput;
}

export async function runDistill(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: BENCH_FLAGS });
  if (!values.out) throw new UsageError('--out DIR is required');
  const out = resolve(io.cwd, values.out);
  const runDir = join(out, 'run');
  const code = await benchCommand.run(benchArgs(values, runDir, []), io);
  if (code !== EXIT.ok) return code;
  try {
    const r = await makeSftData({
      trajectories: [join(runDir, 'trajectories.jsonl')],
      correctOnly: true,
      preferHard: true,
      outDir: out,
      command: ['data', 'distill', ...argv],
    });
    io.stdout.write(
      `wrote ${r.examples} correct teacher conversations (hardest first) to ${join(out, SFT_FILES.jsonl)} ` +
        `and ${SFT_FILES.parquet}\n`,
    );
    return EXIT.ok;
  } catch (err) {
    if (err instanceof DataInputError) return fail(io, 'distill', err.message);
    throw err;
  }
}

export async function runSelfTaught(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: { ...BENCH_FLAGS, exclude: { type: 'string' }, seed: { type: 'string' } },
  });
  if (!values.out) throw new UsageError('--out DIR is required');
  const out = resolve(io.cwd, values.out);
  const runDir = join(out, 'run');
  const samples = values.samples ?? '20';
  const temperature = values.temperature ?? '0.7';
  let excluded = new Set<string>();
  if (values.exclude) {
    try {
      excluded = new Set(
        (JSON.parse(readFileSync(resolve(io.cwd, values.exclude), 'utf8')) as { solved: string[] }).solved,
      );
    } catch (err) {
      return fail(io, 'self-taught', `--exclude: cannot read the solved list: ${(err as Error).message}`);
    }
  }
  const code = await benchCommand.run(
    benchArgs({ ...values, samples, temperature }, runDir, ['--vote-pool', 'samples']),
    io,
  );
  if (code !== EXIT.ok) return code;
  const report = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8')) as BenchReport;
  const opened = await openTrajectoryFile(join(runDir, 'trajectories.jsonl'));
  const random = mulberry32(Number(values.seed ?? 0));
  const selectedPath = join(out, 'selected.jsonl');
  const writer = await TrajectoryWriter.open(selectedPath, { append: false });
  const solved: string[] = [];
  const rules: Record<string, number> = {};
  let skipped = 0;
  try {
    for (const q of report.questions) {
      if (excluded.has(q.id)) {
        skipped++;
        continue;
      }
      const mine = opened.records.filter((r) => r.meta.index === q.index && r.sample > 0);
      const rollouts: Rollout[] = mine.map((r) => ({
        id: r.id,
        turns: r.turns.length,
        text: r.turns.map((t) => t.assistant).join('\n'),
        ex: q.samples[r.sample]?.exec === true,
        em: r.finalSql !== null && r.task.gold !== null && stringExactMatch(r.finalSql, r.task.gold),
      }));
      const sel = selectRollouts(rollouts, q.level, random);
      rules[sel.rule] = (rules[sel.rule] ?? 0) + 1;
      if (sel.valid > 0) solved.push(q.id);
      for (const id of sel.kept) await writer.write(mine.find((r) => r.id === id)!);
    }
  } finally {
    await writer.close();
  }
  try {
    const r = await makeSftData({
      trajectories: [selectedPath],
      outDir: out,
      command: ['data', 'self-taught', ...argv],
    });
    writeFileSync(
      join(out, 'self-taught.json'),
      JSON.stringify(
        {
          schema: 'quarry.self-taught/1',
          samples: Number(samples),
          temperature: Number(temperature),
          questions: report.questions.length,
          excluded: skipped,
          rules,
          solved: [...excluded, ...solved],
          kept: r.examples,
        },
        null,
        2,
      ) + '\n',
    );
    io.stdout.write(
      `round: ${solved.length} of ${report.questions.length - skipped} questions solved (EX ∧ EM); ` +
        `${r.examples} trajectories kept in ${join(out, SFT_FILES.jsonl)}; next round: ` +
        `--exclude ${join(out, 'self-taught.json')}\n`,
    );
    return EXIT.ok;
  } catch (err) {
    if (err instanceof DataInputError) return fail(io, 'self-taught', err.message);
    throw err;
  }
}
