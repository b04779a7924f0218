// `quarry testsuite build`: distilled test suites (Zhong, Yu and Klein, EMNLP 2020) for a dataset's databases, in the
// layout `quarry eval --mode spider` and `quarry bench --test-suite` read (docs/eval-modes.md).
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { cpus } from 'node:os';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { positiveInt } from '../../core/db/execOptions';
import { loadDataset, parseDatasetSpec, DatasetError, type Dataset } from '../../core/datasets';
import { skippedDatabaseText } from '../../core/datasets/databases';
import {
  buildSuite,
  formatSuiteReport,
  SuiteMismatchError,
  type SuiteDatabase,
} from '../../core/eval/testSuite/buildSuite';
import { createProgress } from '../progressBar';

const usage = `Usage: quarry testsuite build --dataset spider|bird|sparc|cosql:FILE.json --db-dir DIR --out TSDIR
                             [--variants N] [--candidates N] [--seed S] [--jobs N] [--max-neighbours N]
                             [--timeout-ms N]

Builds a distilled test suite for every database the dataset's questions use: variants of the database with the
same schema and constraints and fuzzed rows, kept when they tell the gold queries apart from their near neighbours
(changed comparisons, literals, aggregates, join keys, DISTINCT, LIMIT, ORDER BY, AND/OR, selected columns) that
answer like them on the original database (see docs/eval-modes.md).
  --dataset        NAME:FILE — spider, bird, sparc or cosql, e.g. spider:train_spider.json
  --db-dir         databases as DIR/<db_id>/<db_id>.sqlite
  --out            writes TSDIR/<db_id>/<db_id>.sqlite (a copy of the original), <db_id>_ts1.sqlite …,
                   TSDIR/<db_id>/manifest.json and TSDIR/report.json; score with
                   quarry eval --mode spider --db-dir TSDIR or quarry bench --test-suite TSDIR
  --variants       variants kept per database at most (default 8; fewer when more tell apart no further pair)
  --candidates     fuzzed candidates to choose them from (default 32); when the golds compare against literals,
                   columns or subqueries, half as many boundary candidates more (the original's rows moved onto
                   those boundaries)
  --seed           the same seed, inputs and settings give byte-identical files (default 1)
  --jobs           databases built at once, and SQL workers (default: the number of CPUs)
  --max-neighbours neighbours per gold query (default 24)
  --timeout-ms     per statement (default 10000)
A database whose folder has a manifest is complete and is skipped when run again (resume); one built with other
settings or gold queries is refused. Prints how many single-database false positives the suite tells apart.
Exit 0; 1 when some database could not be built; 2 on bad input.`;

function badInput(io: CliIO, message: string): number {
  io.stderr.write(`quarry testsuite: ${message}\n`);
  return EXIT.badInput;
}

function nonNegativeInt(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.trim())) throw new UsageError(`--${name} must be an integer >= 0, got '${value}'`);
  return Number(value);
}

/** The databases of a dataset with their distinct gold queries, in first-use order. */
function suiteDatabases(dataset: Dataset): SuiteDatabase[] {
  const byId = new Map<string, SuiteDatabase>();
  for (const t of dataset.tasks) {
    const d = byId.get(t.dbId) ?? { dbId: t.dbId, source: t.dbPath, golds: [] };
    if (!d.golds.includes(t.gold)) d.golds.push(t.gold);
    byId.set(t.dbId, d);
  }
  return [...byId.values()];
}

async function build(argv: string[], io: CliIO): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      dataset: { type: 'string' },
      'db-dir': { type: 'string' },
      out: { type: 'string' },
      variants: { type: 'string' },
      candidates: { type: 'string' },
      seed: { type: 'string' },
      jobs: { type: 'string' },
      'max-neighbours': { type: 'string' },
      'timeout-ms': { type: 'string' },
    },
  });
  for (const flag of ['dataset', 'db-dir', 'out'] as const) {
    if (!values[flag]) throw new UsageError(`--${flag} is required`);
  }
  let variants: number, candidates: number, jobs: number, maxNeighbours: number, timeoutMs: number;
  let seed: number;
  try {
    variants = positiveInt('variants', values.variants, 8);
    candidates = positiveInt('candidates', values.candidates, 32);
    jobs = positiveInt('jobs', values.jobs, cpus().length);
    maxNeighbours = positiveInt('max-neighbours', values['max-neighbours'], 24);
    timeoutMs = positiveInt('timeout-ms', values['timeout-ms'], 10_000);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  seed = nonNegativeInt('seed', values.seed, 1);
  if (seed > 0xffffffff) throw new UsageError('--seed must be below 2^32');
  seed >>>= 0;
  let dataset: Dataset;
  try {
    const spec = parseDatasetSpec(values.dataset!);
    dataset = loadDataset(spec.name, resolve(io.cwd, spec.file), resolve(io.cwd, values['db-dir']!), {
      skipMissing: true,
    });
  } catch (err) {
    if (err instanceof DatasetError) return badInput(io, err.message);
    throw err;
  }
  for (const s of dataset.skipped ?? []) io.stderr.write(`WARNING: ${skippedDatabaseText(dataset.dbDir, s)}\n`);
  const dbs = suiteDatabases(dataset);
  if (dbs.length === 0) return badInput(io, `${dataset.file} has no question whose database is in ${dataset.dbDir}`);
  const outDir = resolve(io.cwd, values.out!);
  const bar = createProgress(io.stderr, dbs.length, { label: 'testsuite' });
  const t0 = performance.now();
  let built;
  try {
    built = await buildSuite(dbs, {
      outDir,
      jobs,
      seed,
      variants,
      candidates,
      maxNeighbours,
      timeoutMs,
      onProgress: (done, _total, dbId) => bar.update(done, dbId),
    });
    bar.finish();
  } catch (err) {
    bar.finish();
    if (err instanceof SuiteMismatchError) return badInput(io, err.message);
    if (err instanceof Error && /EACCES|EPERM|ENOTDIR|EROFS|ENOSPC/.test((err as NodeJS.ErrnoException).code ?? ''))
      return badInput(io, `cannot write to --out ${outDir}: ${err.message}`);
    throw err;
  }
  io.stdout.write(formatSuiteReport(built.report, built.resumed) + '\n');
  io.stdout.write(
    `built in ${((performance.now() - t0) / 1000).toFixed(1)} s; wrote ${resolve(outDir, 'report.json')}\n`,
  );
  return built.report.failed.length ? EXIT.sqlError : EXIT.ok;
}

export const testsuiteCommand: Command = {
  name: 'testsuite',
  summary: 'Build distilled test-suite databases (fuzzed variants) so execution accuracy catches near misses',
  usage,
  async run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === 'build') return build(rest, io);
    throw new UsageError(sub ? `unknown subcommand '${sub}' (expected build)` : 'expected a subcommand: build');
  },
};
