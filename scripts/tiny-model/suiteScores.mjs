// `npm run train:demo`'s test-suite accuracy (issue 31): execution accuracy on the one transit database is fooled
// (every district has two stops, so a count that names the wrong district matches), so the demo also scores every
// stage's greedy predictions over a distilled test suite of the transit database (`quarry testsuite build`, seeded),
// with `quarry eval --mode spider`, which reads every *.sqlite of TSDIR/<db_id>/ as the suite. A prediction counts
// only if it matches the gold on the original and on every variant.
//
// `quarry` is the caller's way of running the CLI: `(args) => void | Promise<void>`, throwing on a failure (the demo
// spawns dist/cli.js; the unit test calls the CLI's main in-process).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The suite's seed: the same seed, golds and settings give byte-identical databases. */
export const SUITE_SEED = 1;

/** Builds the suite of DATASET's databases (a Spider-format file) into OUT: OUT/<db_id>/<db_id>.sqlite + variants. */
export async function buildSuite(quarry, { dataset, dbDir, out, seed = SUITE_SEED }) {
  await quarry([
    'testsuite',
    'build',
    '--dataset',
    `spider:${dataset}`,
    '--db-dir',
    dbDir,
    '--out',
    out,
    '--seed',
    String(seed),
    '--jobs',
    '1',
  ]);
  return JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
}

/**
 * Scores the greedy predictions of a `quarry bench --out BENCHDIR` run (its predictions.sql and gold.sql) over the
 * databases of DBDIR/<db_id>/ (a suite; a plain database folder gives single-database EX). Writes OUT and returns
 * {accuracy, right: boolean per question, in the dataset's order}.
 */
export async function scorePredictions(quarry, { benchDir, dbDir, out }) {
  await quarry([
    'eval',
    '--mode',
    'spider',
    '--gold',
    join(benchDir, 'gold.sql'),
    '--pred',
    join(benchDir, 'predictions.sql'),
    '--db-dir',
    dbDir,
    '--jobs',
    '1',
    '--out',
    out,
  ]);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  const right = [...report.items].sort((a, b) => a.index - b.index).map((item) => item.exec === true);
  return { accuracy: report.totals.exec, right };
}
