// Tests of rewards/registry: the papers ship as built-in panels; a panel file composes its own terms and weights
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  loadPanel,
  resolvePanel,
  registerBuiltins,
  listPanels,
  scorePanel,
  registerTerm,
} from '../../../src/core/rewards';
import { tempDir } from '../../helpers/fixtures';
import { schoolDb, newPool, newResources } from './fixtures';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);
registerBuiltins();

test('the papers ship as built-in panels', () => {
  for (const p of ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1']) assert.ok(listPanels().includes(p), p);
  assert.deepEqual(
    loadPanel('mtir').terms.map((t) => [t.name, t.gate ?? []]),
    [
      ['format', []],
      ['exec', ['format']],
      ['result', ['format', 'exec']],
    ],
  );
});

test('a panel file composes its own terms and weights', async () => {
  const dir = tempDir();
  const file = join(dir, 'mine.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'exec-and-bigram',
      terms: [
        { name: 'exec', term: 'exec.match', weight: 3 },
        { name: 'bigram', term: 'sql.bigram', weight: 2 },
        { name: 'result', term: 'exec.match', weight: 1, params: { match: 1, miss: -1 }, gate: ['exec'] },
      ],
    }),
  );
  const panel = loadPanel(file);
  const r = await scorePanel(
    panel,
    { goldSql: 'SELECT name FROM student', dbPath: schoolDb, predSql: 'SELECT name FROM teacher' },
    res,
  );
  assert.equal(r.panel, 'exec-and-bigram');
  assert.deepEqual(
    r.terms.map((t) => [t.name, t.value, t.contribution]),
    [
      ['exec', 0, 0],
      ['bigram', 0.5, 1],
      ['result', 0, 0],
    ],
  );
  assert.equal(r.total, 1);
});

test('extends: weights and params override a built-in, the term list is kept', async () => {
  const p = resolvePanel({
    name: 'exec-heavy',
    extends: 'sqltrail',
    weights: { exec: 10, turns: 0 },
    params: { format: { valid: 2 } },
  });
  assert.deepEqual(
    p.terms.map((t) => [t.name, t.weight]),
    [
      ['exec', 10],
      ['turns', 0],
      ['schema', 1],
      ['bigram', 1],
      ['syntax', 1],
      ['format', 1],
    ],
  );
  const r = await scorePanel(
    p,
    { goldSql: 'SELECT 1', dbPath: schoolDb, predSql: 'SELECT 1', difficulty: 'simple' },
    res,
  );
  assert.equal(r.total, 10 + 0 + 1 + 1 + 1 + 2);
  assert.equal(loadPanel('sqltrail').terms[0].weight, 5, 'the built-in itself is untouched');
});

test('bad panels fail with messages that say what to fix', () => {
  const dir = tempDir();
  const write = (name: string, body: string) => {
    const f = join(dir, name);
    writeFileSync(f, body);
    return f;
  };
  assert.throws(() => loadPanel('nosuch'), /unknown panel 'nosuch' \(built-in: .*sqltrail/);
  assert.throws(() => loadPanel(join(dir, 'missing.json')), /cannot read panel file .*no such file/);
  assert.throws(() => loadPanel(write('bad.json', '{"name": ')), /is not valid JSON/);
  assert.throws(() => loadPanel(write('arr.json', '[]')), /one JSON object/);
  assert.throws(
    () => resolvePanel({ name: 'x', terms: [{ name: 'a', term: 'no.such', weight: 1 }] }),
    /unknown term id 'no\.such' \(known: .*exec\.match/,
  );
  assert.throws(
    () => resolvePanel({ name: 'x', terms: [{ name: 'a', term: 'exec.match', weight: Number.NaN }] }),
    /finite numeric "weight"/,
  );
  assert.throws(
    () =>
      resolvePanel({
        name: 'x',
        terms: [
          { name: 'a', term: 'exec.match', weight: 1 },
          { name: 'a', term: 'sql.bigram', weight: 1 },
        ],
      }),
    /'a' appears twice/,
  );
  assert.throws(
    () => resolvePanel({ name: 'x', terms: [{ name: 'a', term: 'exec.match', weight: 1, gate: ['b'] }] }),
    /gated by 'b', which is not an earlier term/,
  );
  assert.throws(() => resolvePanel({ name: 'x', extends: 'sqltrail', weights: { nope: 1 } }), /unknown term 'nope'/);
  assert.throws(() => resolvePanel({ name: 'x', extends: 'ghost' }), /extends unknown panel 'ghost'/);
  assert.throws(() => resolvePanel({ name: 'x' }), /no "terms" and extends no panel/);
});

test('a term returning a non-finite value is an error, not a silent NaN total', async () => {
  registerTerm({
    id: 'test.nan',
    description: 'broken',
    source: 'test',
    fn: () => ({ value: Number.NaN, explanation: 'x' }),
  });
  const p = resolvePanel({ name: 'broken', terms: [{ name: 'n', term: 'test.nan', weight: 1 }] });
  await assert.rejects(
    scorePanel(p, { goldSql: 'SELECT 1', dbPath: schoolDb, predSql: 'SELECT 1' }, res),
    /'test\.nan' returned a non-finite value/,
  );
});
