// `npm run train:demo`'s test-suite scoring (scripts/tiny-model/suiteScores.mjs, issue 31): on the real transit
// sample every district has two stops, so a held-back count that names the wrong district matches the gold there; the
// demo's suite of the held-back golds, scored the way the demo scores each stage, calls it wrong and every gold right.
// And GRPO's `--rl-db distinct` database (rlDatabase.mjs) pays nothing for that count.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { main } from '../../../src/cli/main';
import { repoRoot, tempDir } from '../../helpers/fixtures';
import { capture } from '../captureStream';
import { transitQuestions } from '../../../scripts/tiny-model/transit';

type Quarry = (args: string[]) => Promise<void>;
interface Scores {
  accuracy: number;
  right: boolean[];
}
// Plain ES modules the demo imports as they are (Node loads them with require).
const suite = require(join(repoRoot, 'scripts', 'tiny-model', 'suiteScores.mjs')) as {
  SUITE_SEED: number;
  buildSuite(q: Quarry, o: { dataset: string; dbDir: string; out: string; seed?: number }): Promise<unknown>;
  scorePredictions(q: Quarry, o: { benchDir: string; dbDir: string; out: string }): Promise<Scores>;
};
const rlDatabase = require(join(repoRoot, 'scripts', 'tiny-model', 'rlDatabase.mjs')) as {
  writeDistinctCountsDb(src: string, dest: string): void;
};

const transit = join(repoRoot, 'media', 'samples', 'transit.sqlite');
const dir = tempDir('quarry-train-demo-suite-');

/** The CLI in-process, as the demo's quarry() runs dist/cli.js: throws on a non-zero exit. */
const quarry: Quarry = async (args) => {
  const err = capture();
  const code = await main(args, { stdout: capture().stream, stderr: err.stream, cwd: dir });
  if (code !== 0) throw new Error(`quarry ${args.join(' ')}: exit ${code}\n${err.text()}`);
};

/** The held-back golds as the demo writes them (heldout-spider.json), in a Spider layout DB folder. */
function heldBack() {
  const db = new Database(transit, { readonly: true });
  const golds = transitQuestions(db)
    .filter((q) => q.heldout)
    .map((q) => ({ db_id: 'transit', question: q.question, query: q.sql }));
  db.close();
  mkdirSync(join(dir, 'db', 'transit'), { recursive: true });
  copyFileSync(transit, join(dir, 'db', 'transit', 'transit.sqlite'));
  writeFileSync(join(dir, 'heldout-spider.json'), JSON.stringify(golds));
  return golds;
}

const rows = (path: string, sql: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return JSON.stringify(db.prepare(sql).raw().all());
  } finally {
    db.close();
  }
};

test("a count naming the wrong district is right on the transit database and wrong over the demo's suite", async () => {
  const golds = heldBack();
  const at = golds.findIndex((g) => /COUNT\(\*\) FROM stop WHERE district = 'Docks'/.test(g.query));
  assert.ok(at >= 0, 'the held-back questions count the stops in Docks');
  const blind = golds[at].query.replace("'Docks'", "'Centre'");
  // The false positive is real on the sample itself: two stops each.
  assert.equal(rows(transit, blind), rows(transit, golds[at].query));

  await suite.buildSuite(quarry, {
    dataset: join(dir, 'heldout-spider.json'),
    dbDir: join(dir, 'db'),
    out: join(dir, 'ts'),
  });
  // A bench run's files: every prediction the gold, but the district-blind count.
  const benchDir = join(dir, 'eval-stage');
  mkdirSync(benchDir, { recursive: true });
  writeFileSync(join(benchDir, 'gold.sql'), golds.map((g) => `${g.query}\ttransit\n`).join(''));
  writeFileSync(join(benchDir, 'predictions.sql'), golds.map((g, i) => `${i === at ? blind : g.query}\n`).join(''));

  const single = await suite.scorePredictions(quarry, {
    benchDir,
    dbDir: join(dir, 'db'),
    out: join(dir, 'ex.json'),
  });
  const overSuite = await suite.scorePredictions(quarry, {
    benchDir,
    dbDir: join(dir, 'ts'),
    out: join(dir, 'ts.json'),
  });
  assert.equal(single.right[at], true, 'EX on the one database is fooled');
  assert.equal(single.accuracy, 1);
  assert.equal(overSuite.right[at], false, 'the suite catches the wrong district');
  assert.deepEqual(
    overSuite.right.map((ok, i) => i === at || ok),
    golds.map(() => true),
    'every other prediction (the gold) stays right over the suite',
  );
  assert.equal(overSuite.accuracy, (golds.length - 1) / golds.length);
});

test('on GRPO\'s "distinct" database no two districts share a count, so the wrong district earns nothing', () => {
  const out = join(dir, 'rl-db.sqlite');
  rlDatabase.writeDistinctCountsDb(transit, out);
  const counts = JSON.parse(rows(out, 'SELECT district, COUNT(*) FROM stop GROUP BY district')) as [string, number][];
  assert.equal(counts.length, 5);
  assert.equal(new Set(counts.map(([, n]) => n)).size, 5);
  const gold = "SELECT COUNT(*) FROM stop WHERE district = 'Docks';";
  assert.notEqual(rows(out, gold.replace('Docks', 'Centre')), rows(out, gold));
  // The first rows, which the prompt shows, are the sample's.
  const first = 'SELECT * FROM stop ORDER BY stop_id LIMIT 3';
  assert.equal(rows(out, first), rows(transit, first));
});
