// quarry eval --mode spider on the Spider train gold used as predictions, and on a perturbed copy; optionally the
// official test-suite evaluator on the same files (QUARRY_OFFICIAL_SPIDER = a directory holding driver.py, which
// calls exec_eval.eval_exec_match per item the way evaluation.py does) with the speed ratio and per-item agreement.
// QUARRY_OFFICIAL_BIRD = a directory holding driver_bird.py (BIRD evaluation_ex.py's per-item scoring) adds the same
// for --mode bird. Each comparison runs QUARRY_BENCH_REPS times (default 3), quarry and official back to back;
// medians and per-run speed-ups are reported, plus the one-item fixed cost of each whole process.
import { readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { repoRoot, requireSpider, writeResult } from './common';
import { perturb } from './perturb';

interface SpiderExample {
  query: string;
  db_id: string;
}
interface TableEntry {
  db_id: string;
  table_names_original: string[];
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

function timed(cmd: string, args: string[]): { seconds: number; status: number | null; stderr: string } {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { seconds: (performance.now() - t0) / 1000, status: r.status, stderr: r.stderr ?? '' };
}

const spider = requireSpider();
const examples: SpiderExample[] = JSON.parse(readFileSync(join(spider, 'train_spider.json'), 'utf8'));
const tables: TableEntry[] = JSON.parse(readFileSync(join(spider, 'tables.json'), 'utf8'));
const tableNames = new Map(tables.map((t) => [t.db_id, t.table_names_original]));
const dbDir = join(spider, 'database');
const work = mkdtempSync(join(tmpdir(), 'quarry-eval-bench-'));
const gold = join(work, 'gold.sql');
writeFileSync(gold, examples.map((e) => `${oneLine(e.query)}\t${e.db_id}`).join('\n') + '\n');
const inputs = {
  gold: examples.map((e) => oneLine(e.query)),
  perturbed: examples.map((e, i) => perturb(oneLine(e.query), i, () => tableNames.get(e.db_id) ?? [])),
};
const python = process.env.QUARRY_PYTHON ?? '/usr/bin/python3';
const cli = join(repoRoot, 'dist', 'cli.js');
// Spider always; BIRD too when its reconstructed driver is given (it validates the bird mode on the same inputs).
const runs = [
  { mode: 'spider', official: process.env.QUARRY_OFFICIAL_SPIDER, driver: 'driver.py' },
  ...(process.env.QUARRY_OFFICIAL_BIRD
    ? [{ mode: 'bird', official: process.env.QUARRY_OFFICIAL_BIRD, driver: 'driver_bird.py' }]
    : []),
];
const reps = Math.max(1, Number(process.env.QUARRY_BENCH_REPS ?? 3));
const median = (xs: number[]): number => {
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[v.length >> 1] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const round = (x: number) => Number(x.toFixed(4));
const result: Record<string, unknown> = {
  items: examples.length,
  reps,
  command:
    'npm run build && QUARRY_PYTHON=<python with sqlparse, tqdm> QUARRY_OFFICIAL_SPIDER=/tmp/official/exec ' +
    'node_modules/.bin/node bench/run.mjs eval',
};

for (const { mode, official, driver } of runs) {
  const modeResult: Record<string, unknown> = { official: official ?? null };
  const hasOfficial = !!official && existsSync(join(official, driver));
  // Whole process, quarry eval and the official evaluator back to back, `reps` times; medians and per-run ratios.
  const both = (goldFile: string, pred: string, out: string, offOut: string) => {
    const ours = timed(process.execPath, [
      cli,
      'eval',
      '--mode',
      mode,
      '--gold',
      goldFile,
      '--pred',
      pred,
      '--db-dir',
      dbDir,
      '--out',
      out,
    ]);
    if (ours.status !== 0) throw new Error(`quarry eval failed on ${pred}: ${ours.stderr}`);
    const off = hasOfficial ? timed(python, [join(official!, driver), goldFile, pred, dbDir, offOut]) : null;
    if (off && off.status !== 0) throw new Error(`official evaluator failed on ${pred}: ${off.stderr}`);
    return { ours: ours.seconds, official: off?.seconds ?? null };
  };
  for (const [name, preds] of Object.entries(inputs)) {
    const pred = join(work, `${name}.pred.sql`);
    const out = join(work, `${mode}.${name}.report.json`);
    const offOut = join(work, `${mode}.${name}.official.json`);
    writeFileSync(pred, preds.join('\n') + '\n');
    const runsOf = Array.from({ length: reps }, (_, r) => {
      const t = both(gold, pred, out, offOut);
      console.log(
        `${mode} ${name} run ${r + 1}: quarry eval ${t.ours.toFixed(2)} s` +
          (t.official === null
            ? ''
            : `, official ${t.official.toFixed(2)} s, speed-up ${(t.official / t.ours).toFixed(1)}x`),
      );
      return t;
    });
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      items: { exec: boolean; reason: string }[];
      totals: { exec: number };
    };
    const oursSeconds = median(runsOf.map((t) => t.ours));
    const entry: Record<string, unknown> = {
      oursSeconds: round(oursSeconds),
      oursRuns: runsOf.map((t) => round(t.ours)),
      oursExec: report.totals.exec,
    };
    if (hasOfficial) {
      const verdicts = JSON.parse(readFileSync(offOut, 'utf8')) as (number | string)[];
      const disagreements = verdicts.flatMap((v, i) =>
        (v === 1) !== report.items[i].exec
          ? [{ index: i, official: v, ours: report.items[i].reason, pred: preds[i], gold: examples[i].query }]
          : [],
      );
      const officialEx = verdicts.filter((v) => v === 1).length / verdicts.length;
      const speedups = runsOf.map((t) => t.official! / t.ours);
      const officialSeconds = median(runsOf.map((t) => t.official!));
      Object.assign(entry, {
        officialSeconds: round(officialSeconds),
        officialRuns: runsOf.map((t) => round(t.official!)),
        officialExec: officialEx,
        speedup: round(median(speedups)),
        speedupRuns: speedups.map(round),
        speedupTarget: '>= 8x',
        agreement: 1 - disagreements.length / verdicts.length,
        disagreements,
      });
      console.log(
        `${mode} ${name}: median quarry ${oursSeconds.toFixed(2)} s, official ${officialSeconds.toFixed(2)} s ` +
          `(EX ${officialEx.toFixed(4)}), speed-up ${median(speedups).toFixed(1)}x, ` +
          `agreement ${verdicts.length - disagreements.length}/${verdicts.length}`,
      );
    }
    modeResult[name] = entry;
  }
  // The fixed cost of a whole process: one item (the first gold line) scored by each.
  const oneGold = join(work, 'one.gold.sql');
  const onePred = join(work, 'one.pred.sql');
  writeFileSync(oneGold, readFileSync(gold, 'utf8').split('\n')[0] + '\n');
  writeFileSync(onePred, inputs.gold[0] + '\n');
  const one = Array.from({ length: reps }, () =>
    both(oneGold, onePred, join(work, 'one.report.json'), join(work, 'one.official.json')),
  );
  modeResult.oneItem = {
    oursSeconds: round(median(one.map((t) => t.ours))),
    officialSeconds: hasOfficial ? round(median(one.map((t) => t.official!))) : null,
  };
  console.log(`${mode} one item: ${JSON.stringify(modeResult.oneItem)}`);
  result[mode] = modeResult;
}
rmSync(work, { recursive: true, force: true });
writeResult('eval', result);
