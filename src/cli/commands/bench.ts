// `quarry bench`: a dataset (Spider, BIRD, SParC, CoSQL) through the agent: EX for greedy decoding, the vote and
// pass@K by hardness, exact matches, agent behaviour; resumable, with a progress bar (docs/bench.md).
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command, CliIO } from '../command';
import { UsageError, EXIT } from '../command';
import { positiveInt } from '../../core/db/execOptions';
import { loadDataset, parseDatasetSpec, DatasetError, type Dataset } from '../../core/datasets';
import { skippedDatabaseText } from '../../core/datasets/databases';
import { isProtocolName, PROTOCOL_NAMES } from '../../core/agent/protocols';
import { createModel } from '../../core/models';
import { ModelError, type ChatModel } from '../../core/models/types';
import {
  runBenchmark,
  formatReport,
  BENCH_FILES,
  ResumeMismatchError,
  ensureDir,
  benchProtocolConfig,
  defaultVotePool,
  episodesPerQuestion,
  isVotePool,
  VOTE_POOLS,
  type VotePool,
} from '../../core/datasetRuns';
import { createProgress } from '../progressBar';
import { suiteDatabases } from '../../core/eval/testSuite/suiteMode';

const usage = `Usage: quarry bench --dataset spider|bird|sparc|cosql:FILE.json --db-dir DIR --model SPEC --protocol P
                    [--samples K] [--vote-pool samples|greedy+samples] [--temperature T] [--max-turns N]
                    [--limit N] [--jobs N] --out DIR [--resume] [--strict] [--test-suite TSDIR]

Runs every question of a dataset through the agent K times and scores it by execution (see docs/bench.md).
  --dataset      NAME:FILE — spider (also Spider-DK/Syn/Realistic), bird, sparc or cosql, e.g. spider:dev.json
  --db-dir       databases as DIR/<db_id>/<db_id>.sqlite
  --model        openai:<baseURL>#<model> or onnx:<dir>
  --protocol     ${PROTOCOL_NAMES.join(', ')}; progress runs as Progress-SQL evaluates: App. F's prompt, one turn,
                 no ODT feedback (no gold-derived text reaches the model)
  --samples      K, the candidates of the majority vote (default 1: the greedy run only); sample 0 is greedy
  --vote-pool    samples: the papers' Vote@K over K sampled runs apart from the greedy one (K + 1 episodes per
                 question; the default for sqltrail and progress, whose papers report it); greedy+samples: the greedy
                 answer and K-1 samples vote together (K episodes; the default for skyrl, mtir, mtsqlr1)
  --temperature  temperature of the sampled runs (default 1.0)
  --max-turns    turn budget (default: the protocol's own; progress: 1 only)
  --limit        only the first N questions (SParC/CoSQL: turns)
  --jobs         episodes at once (default 1)
  --out          writes DIR/trajectories.jsonl, predictions.sql, gold.sql, report.json
  --resume       reuse the finished episodes in DIR/trajectories.jsonl (same dataset, model, protocol, budget,
                 temperature) and run only the missing and failed ones
  --strict       refuse (exit 2) when a question's database is missing from --db-dir; by default the others run,
                 each missing database is named with the questions it skipped, and report.json lists them (skipped)
  --test-suite   TSDIR from quarry testsuite build: EX counts a prediction right only if it matches the gold on
                 every TSDIR/<db_id>/*.sqlite; the single-database EX and the scoring time per question with and
                 without the suite are printed too (report.json testSuite)
Prints EX for greedy decoding, majority vote and pass@K, by hardness (BIRD: by difficulty), with average turns,
invalid-action rate and tokens per turn. Ctrl-C stops cleanly and keeps the finished questions (a second Ctrl-C
quits at once). A run stops by itself after 10 episodes in a row fail (server down, wrong model name).
Exit 0; 1 when interrupted, stopped by failures, or when every episode failed; 2 on bad input.`;

function badInput(io: CliIO, message: string): number {
  io.stderr.write(`quarry bench: ${message}\n`);
  return EXIT.badInput;
}

function nonNegativeNumber(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new UsageError(`--${name} must be a number >= 0, got '${value}'`);
  return n;
}

export const benchCommand: Command = {
  name: 'bench',
  summary: 'Run a dataset through the agent: EX for greedy, majority vote and pass@K, by hardness',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        dataset: { type: 'string' },
        'db-dir': { type: 'string' },
        model: { type: 'string' },
        protocol: { type: 'string' },
        samples: { type: 'string' },
        'vote-pool': { type: 'string' },
        temperature: { type: 'string' },
        'max-turns': { type: 'string' },
        limit: { type: 'string' },
        jobs: { type: 'string' },
        out: { type: 'string' },
        resume: { type: 'boolean' },
        strict: { type: 'boolean' },
        'test-suite': { type: 'string' },
      },
    });
    for (const flag of ['dataset', 'db-dir', 'model', 'protocol', 'out'] as const) {
      if (!values[flag]) throw new UsageError(`--${flag} is required`);
    }
    const protocol = values.protocol!;
    if (!isProtocolName(protocol)) {
      throw new UsageError(`--protocol must be one of ${PROTOCOL_NAMES.join(', ')}, got '${protocol}'`);
    }
    const votePoolFlag = values['vote-pool'];
    if (votePoolFlag !== undefined && !isVotePool(votePoolFlag)) {
      throw new UsageError(`--vote-pool must be one of ${VOTE_POOLS.join(', ')}, got '${votePoolFlag}'`);
    }
    const votePool: VotePool | undefined = votePoolFlag;
    let samples: number, jobs: number, maxTurns: number | undefined, limit: number | undefined;
    try {
      samples = positiveInt('samples', values.samples, 1);
      jobs = positiveInt('jobs', values.jobs, 1);
      maxTurns = values['max-turns'] === undefined ? undefined : positiveInt('max-turns', values['max-turns'], 0);
      limit = values.limit === undefined ? undefined : positiveInt('limit', values.limit, 0);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    try {
      benchProtocolConfig(protocol, maxTurns);
    } catch (err) {
      throw new UsageError(`--max-turns: ${(err as Error).message}`);
    }
    const temperature = nonNegativeNumber('temperature', values.temperature, 1);
    if (values.temperature !== undefined && samples === 1) {
      io.stderr.write(
        'quarry bench: note: --temperature applies to the sampled runs; ' + 'with --samples 1 the only run is greedy\n',
      );
    }
    if (votePool !== undefined && samples === 1) {
      io.stderr.write('quarry bench: note: --vote-pool has no effect with --samples 1 (no vote)\n');
    }

    let dataset: Dataset;
    try {
      const spec = parseDatasetSpec(values.dataset!);
      dataset = loadDataset(spec.name, resolve(io.cwd, spec.file), resolve(io.cwd, values['db-dir']!), {
        skipMissing: values.strict !== true,
      });
    } catch (err) {
      if (err instanceof DatasetError) return badInput(io, err.message);
      throw err;
    }
    if (dataset.tasks.length === 0) return badInput(io, `${dataset.file} has no questions`);
    for (const s of dataset.skipped ?? []) io.stderr.write(`WARNING: ${skippedDatabaseText(dataset.dbDir, s)}\n`);
    const testSuite = values['test-suite'] === undefined ? undefined : resolve(io.cwd, values['test-suite']);
    if (testSuite !== undefined) {
      const missing = [...new Set(dataset.tasks.map((t) => t.dbId))].filter(
        (id) => suiteDatabases(testSuite, id).length === 0,
      );
      if (missing.length) {
        return badInput(
          io,
          `--test-suite ${testSuite} has no databases for ${missing.slice(0, 10).join(', ')}` +
            `${missing.length > 10 ? ` … (${missing.length})` : ''} (build them with quarry testsuite build)`,
        );
      }
    }
    const outDir = resolve(io.cwd, values.out!);
    try {
      ensureDir(outDir);
    } catch (err) {
      return badInput(io, `--out: ${(err as Error).message}`);
    }

    let model: ChatModel;
    try {
      model = await createModel(values.model!, { cwd: io.cwd });
    } catch (err) {
      return badInput(
        io,
        err instanceof ModelError && err.kind !== 'bad-spec'
          ? `the model could not be loaded: ${err.message}`
          : (err as Error).message,
      );
    }

    const planned = limit === undefined ? dataset.tasks.length : Math.min(limit, dataset.tasks.length);
    const cancel = new AbortController();
    const onSigint = () => {
      if (cancel.signal.aborted) process.exit(130);
      io.stderr.write(
        '\nquarry bench: stopping — running episodes are cancelled, finished questions are kept ' +
          '(Ctrl-C again to quit at once)\n',
      );
      cancel.abort();
    };
    // TERM and HUP (a job runner, a closed terminal) stop the run the same way: what is finished is kept.
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onSigint);
    const episodes = planned * episodesPerQuestion(samples, votePool ?? defaultVotePool(protocol));
    const bar = createProgress(io.stderr, episodes, { label: 'bench' });
    let report;
    try {
      report = await runBenchmark({
        dataset,
        model,
        protocol,
        samples,
        votePool,
        temperature,
        maxTurns,
        limit,
        jobs,
        outDir,
        signal: cancel.signal,
        resume: values.resume === true,
        testSuite,
        onProgress: (p) =>
          bar.update(
            p.episodesDone,
            p.questionsScored > 0
              ? `greedy EX ${((100 * p.greedyCorrect) / p.questionsScored).toFixed(1)}% of ${p.questionsScored}`
              : undefined,
          ),
      });
      bar.finish();
    } catch (err) {
      bar.finish();
      if (err instanceof ResumeMismatchError) return badInput(io, err.message);
      if (err instanceof Error && /EACCES|EPERM|ENOTDIR|EROFS|ENOSPC/.test((err as NodeJS.ErrnoException).code ?? ''))
        return badInput(io, `cannot write to --out ${outDir}: ${err.message}`);
      throw err;
    } finally {
      for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, onSigint);
      await model.close();
    }
    if (report.resumedEpisodes > 0)
      io.stderr.write(
        `resumed: ${report.resumedEpisodes} episodes reused from ${resolve(outDir, BENCH_FILES.trajectories)}\n`,
      );
    io.stdout.write(formatReport(report) + '\n');
    if (report.testSuite) {
      const ts = report.testSuite;
      io.stdout.write(
        `test suite    EX greedy ${(100 * report.ex.greedy).toFixed(1)}% over ${ts.dir}, ` +
          `${(100 * ts.singleDatabaseGreedy).toFixed(1)}% on the single database ` +
          `(${ts.turnedIntoMisses} right there, wrong on the suite)\n` +
          `              scoring ${ts.scoringMsPerItem.testSuite.toFixed(1)} ms per question over the suite, ` +
          `${ts.scoringMsPerItem.singleDatabase.toFixed(1)} ms on the single database\n`,
      );
    }
    for (const e of [...report.errors, ...report.warnings]) io.stderr.write(`WARNING: ${e}\n`);
    io.stderr.write(
      `wrote ${Object.values(BENCH_FILES)
        .map((f) => resolve(outDir, f))
        .join(', ')}\n`,
    );
    if (report.stopped === 'errors') {
      io.stderr.write('quarry bench: stopped: too many episodes failed in a row (see the warnings above)\n');
      return EXIT.sqlError;
    }
    if (report.trajectories > 0 && report.ends.error === report.trajectories) {
      io.stderr.write('quarry bench: every episode failed (see the warnings above)\n');
      return EXIT.sqlError;
    }
    return report.complete ? EXIT.ok : EXIT.sqlError;
  },
};
