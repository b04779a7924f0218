// Each panel states the result comparator its paper's evaluator uses (issue 10, item 7); a panel file can set it and
// a scoring call's own mode overrides it. The pair below differs only in row order under an ORDER BY gold: Spider's
// rules compare in order, BIRD's (and OmniSQL's, and skyrl-gym's frozenset) do not.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPanel, scorePanel } from '../../../src/core/rewards';
import { schoolDb, newPool, newResources } from './fixtures';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);
const gold = 'SELECT name FROM student ORDER BY name DESC';
const pred = 'SELECT name FROM student ORDER BY name';

const exec = async (panel: ReturnType<typeof loadPanel>, mode?: 'spider' | 'bird' | 'omnisql') => {
  const r = await scorePanel(panel, { goldSql: gold, predSql: pred, dbPath: schoolDb, mode }, res);
  return r.terms.find((t) => t.name === 'exec' || t.name === 'ex' || t.name === 'result')!;
};

test(
  'built-in panels state their comparator: skyrl bird (skyrl-gym frozenset), progress omnisql (App. B), the ' +
    'rest spider',
  () => {
    assert.deepEqual(
      ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress'].map((n) => [n, loadPanel(n).mode]),
      [
        ['skyrl', 'bird'],
        ['sqltrail', 'spider'],
        ['mtir', 'spider'],
        ['mtsqlr1', 'spider'],
        ['progress', 'omnisql'],
      ],
    );
  },
);

test('a panel scores with its own comparator unless the call names one', async () => {
  // skyrl-gym (calculate_reward_single) compares frozenset(fetchall()): row order never matters.
  assert.equal((await exec(loadPanel('skyrl'))).value, 1);
  assert.equal((await exec(loadPanel('skyrl'), 'spider')).value, 0);
  assert.equal((await exec(loadPanel('sqltrail'))).value, 0);
  assert.equal((await exec(loadPanel('sqltrail'), 'bird')).value, 1);
});

test('a panel file sets the comparator, inherits it through extends, and a bad one is named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-panel-'));
  const bird = join(dir, 'bird.json');
  writeFileSync(bird, JSON.stringify({ name: 'trail-bird', extends: 'sqltrail', mode: 'bird' }));
  assert.equal(loadPanel(bird).mode, 'bird');
  assert.equal((await exec(loadPanel(bird))).value, 1);
  const inherit = join(dir, 'inherit.json');
  writeFileSync(inherit, JSON.stringify({ name: 'sky-heavy', extends: 'skyrl', weights: { exec: 2 } }));
  assert.equal(loadPanel(inherit).mode, 'bird');
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ name: 'bad', extends: 'skyrl', mode: 'sqlite' }));
  assert.throws(
    () => loadPanel(bad),
    /panel 'bad': "mode" must be one of spider, bird, omnisql, spider2 \(got "sqlite"\)/,
  );
});
