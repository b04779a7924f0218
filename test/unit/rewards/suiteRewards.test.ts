// Reward panels' execution terms over a test suite, on real SQLite files: a near-miss count that matches on the
// transit database is taken back by the suite's variant (the explanation names it and how many databases were
// checked), a rewrite stays right; a panel file may only require or refuse a suite (never name a folder); lookups stay
// inside TSDIR/<db_id>/ (no `..`, no links out, a cap on files); and the integrity report counts the rewards of 1 the
// suite takes back.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, copyFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { panelFromText } from '../../../src/core/rewards/panelFile';
import { scorePanelDetailed, checkIntegrity, integrityFlags, registerBuiltins } from '../../../src/core/rewards';
import { SuiteError, TestSuite } from '../../../src/core/rewards/testSuite';
import { suiteCheckOf } from '../../../src/core/rewards/engine';
import { scoreRun } from '../../../src/core/rewards/scoreRun';
import { tempDir } from '../../helpers/fixtures';
import { TRANSIT_GOLD, TRANSIT_NEAR_MISS, TRANSIT_REWRITE, transitSuite } from '../../helpers/transitSuite';
import { newPool, newResources, skyrlEpisode } from './fixtures';

registerBuiltins();
const pool = newPool();
after(() => pool.close());
const t = transitSuite();
const suite = new TestSuite(t.tsDir);

const exPanel = (exec?: unknown) =>
  panelFromText(
    JSON.stringify({
      name: 'ex-only',
      terms: [{ name: 'ex', term: 'exec.match', weight: 1 }],
      ...(exec === undefined ? {} : { exec }),
    }),
    'ex.json',
  );

async function ex(predSql: string, opts: { suite?: TestSuite | null; exec?: unknown; dbPath?: string } = {}) {
  return scorePanelDetailed(
    exPanel(opts.exec),
    { goldSql: TRANSIT_GOLD, dbPath: opts.dbPath ?? t.dbPath, predSql, testSuite: opts.suite },
    newResources(pool),
  );
}

test('a near miss right on the single database is taken back by the suite, naming the variant', async () => {
  const single = await ex(TRANSIT_NEAR_MISS);
  assert.equal(single.total, 1, 'execution on one database cannot tell district 1 from 2');
  const over = await ex(TRANSIT_NEAR_MISS, { suite });
  assert.equal(over.total, 0);
  assert.match(over.terms[0].explanation, /not on test-suite variant transit\/transit_v1\.sqlite/);
  assert.match(over.terms[0].explanation, /checked over 2 databases of the test suite/);
  assert.deepEqual(suiteCheckOf(over), { databases: 2, singleCorrect: true, disagreed: 'transit/transit_v1.sqlite' });
});

test('a rewrite that keeps the meaning stays right over every database of the suite', async () => {
  const r = await ex(TRANSIT_REWRITE, { suite });
  assert.equal(r.total, 1);
  assert.match(r.terms[0].explanation, /checked over 2 databases of the test suite, all agree/);
  const wrong = await ex('SELECT 7', { suite });
  assert.equal(wrong.total, 0);
  assert.match(wrong.terms[0].explanation, /not checked further over 2 databases/);
});

test('"exec": {"testSuite": false} scores on the database alone even when a suite is given', async () => {
  const r = await ex(TRANSIT_NEAR_MISS, { suite, exec: { testSuite: false } });
  assert.equal(r.total, 1);
  assert.equal(suiteCheckOf(r), undefined);
});

test('a panel requiring a suite is refused without one, or for a database the suite has no folder for', async () => {
  await assert.rejects(
    ex(TRANSIT_GOLD, { exec: { testSuite: true } }),
    (err: Error) =>
      err instanceof SuiteError && /requires a test suite .* none was given .*--test-suite/.test(err.message),
  );
  await assert.rejects(
    ex(TRANSIT_GOLD, { suite, exec: { testSuite: true }, dbPath: t.lonelyPath }),
    /the suite has no folder for database 'lonely'/,
  );
  // Without the requirement the lonely database is scored alone.
  assert.equal((await ex(TRANSIT_NEAR_MISS, { suite, dbPath: t.lonelyPath })).total, 1);
});

test('panel-file validation: "exec" may only switch a suite on or off, never name its folder', () => {
  assert.throws(() => exPanel({ testSuite: '/srv/suites' }), /a panel cannot name a test-suite folder/);
  assert.throws(() => exPanel({ testSuite: 1 }), /"exec.testSuite" must be true or false/);
  assert.throws(() => exPanel({ dir: 'x' }), /"exec" has unknown key 'dir'/);
  assert.throws(() => exPanel('yes'), /"exec" must be an object/);
  assert.equal(exPanel({ testSuite: true }).testSuite, 'require');
  assert.equal(exPanel({ testSuite: false }).testSuite, 'off');
  assert.equal(exPanel().testSuite, undefined);
  const child = panelFromText(JSON.stringify({ name: 'c', extends: 'skyrl', exec: { testSuite: true } }), 'c.json');
  assert.equal(child.testSuite, 'require');
});

test('lookups stay inside TSDIR/<db_id>/: no `..`, no separators, no links out, at most maxDatabases files', () => {
  for (const bad of ['..', '.', 'a/b', '../transit', 'x\\y', ''])
    assert.throws(() => suite.databases(bad), SuiteError, JSON.stringify(bad));
  assert.equal(suite.databases('nothing-here'), null);
  const ts = tempDir('quarry-ts-');
  const outside = tempDir('quarry-out-');
  copyFileSync(t.variantPath, join(outside, 'secret.sqlite'));
  mkdirSync(join(ts, 'linked'));
  symlinkSync(join(outside, 'secret.sqlite'), join(ts, 'linked', 'linked_v1.sqlite'));
  symlinkSync(outside, join(ts, 'outdir'));
  const s = new TestSuite(ts);
  assert.throws(() => s.databases('linked'), /linked\/linked_v1\.sqlite leads out of the suite's folder/);
  assert.throws(() => s.databases('outdir'), /folder for 'outdir' leads out of the suite/);
  assert.throws(() => new TestSuite(t.tsDir, { maxDatabases: 1 }).databases('transit'), /holds 2 databases; at most 1/);
});

test("a folder's listing is read again when the folder changes", () => {
  const ts = tempDir('quarry-ts-');
  mkdirSync(join(ts, 'transit'));
  copyFileSync(t.dbPath, join(ts, 'transit', 'transit.sqlite'));
  const s = new TestSuite(ts);
  assert.equal(s.databases('transit')?.files.length, 1);
  copyFileSync(t.variantPath, join(ts, 'transit', 'transit_v1.sqlite'));
  utimesSync(join(ts, 'transit'), new Date(), new Date(Date.now() + 5000));
  assert.deepEqual(s.databases('transit')?.names, ['transit/transit.sqlite', 'transit/transit_v1.sqlite']);
});

test('integrity: the rewards of 1 on the single database that the suite takes back are listed', async () => {
  const recs = [TRANSIT_NEAR_MISS, TRANSIT_REWRITE, 'SELECT 9'].map((sql, i) => {
    const r = skyrlEpisode([], sql, { id: `t${i}`, gold: TRANSIT_GOLD, dbPath: t.dbPath });
    r.task.db.id = 'transit';
    return r;
  });
  const panel = exPanel();
  const without = await scoreRun(recs, panel, { resources: newResources(pool) });
  assert.equal(without.integrity.testSuite, undefined);
  const report = await scoreRun(recs, panel, { resources: newResources(pool), testSuite: suite });
  assert.deepEqual(report.integrity.testSuite, {
    checked: 3,
    singlePositives: 2,
    count: 1,
    items: ['t0'],
    takenBack: [{ id: 't0', variant: 'transit/transit_v1.sqlite', reason: 'values' }],
  });
  assert.ok(
    integrityFlags(report.integrity).some((f) =>
      /test suite takes back 1 of 2 rewards of 1 on the single database .*: t0 \(transit\/transit_v1\.sqlite\)/.test(f),
    ),
  );
  // checkIntegrity reads it off the verdicts alone.
  const items = report.scored.map((s) => ({
    id: s.id,
    goldSql: TRANSIT_GOLD,
    predSql: s.verdict.sql,
    verdict: s.verdict,
    reward: s.result.total,
  }));
  assert.equal(checkIntegrity(items).testSuite?.count, 1);
});
