// Tests of rewards/integrity: SELECT * detection: top-level star projections, not count(*) or arithmetic; integrity
// flags on a fixture run name the items behind each flag
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkIntegrity,
  integrityFlags,
  integrityFlagItems,
  selectsStar,
  computeVerdict,
  createScoringResources,
  type IntegrityItem,
} from '../../../src/core/rewards';
import { evalMode } from '../../../src/core/eval/modes';
import { schoolDb, newPool, newResources } from './fixtures';

const pool = newPool();
after(() => pool.close());
const res = newResources(pool);

async function item(
  id: string,
  gold: string,
  pred: string | null,
  opts: { groupId?: string; reward?: number; format?: { ok: boolean; kind?: string }; mode?: string } = {},
): Promise<IntegrityItem> {
  const verdict = await computeVerdict(pred, gold, schoolDb, evalMode(opts.mode ?? 'spider'), res);
  return {
    id,
    groupId: opts.groupId,
    goldSql: gold,
    predSql: pred,
    verdict,
    reward: opts.reward ?? (verdict.correct ? 1 : 0),
    format: opts.format,
  };
}

test('SELECT * detection: top-level star projections, not count(*) or arithmetic', () => {
  for (const s of [
    'SELECT * FROM t',
    'select distinct * from t',
    'SELECT T1.* FROM t AS T1',
    'SELECT a, * FROM t',
    'SELECT "t".* FROM "t"',
  ])
    assert.ok(selectsStar(s), s);
  for (const s of [
    'SELECT count(*) FROM t',
    'SELECT a * b FROM t',
    "SELECT 'SELECT *' FROM t",
    'SELECT x, y * 2 FROM t',
  ])
    assert.ok(!selectsStar(s), s);
});

test('integrity flags on a fixture run name the items behind each flag', async () => {
  const items = await Promise.all([
    // free win: gold returns nothing, neither does the prediction
    item('empty-win', "SELECT name FROM student WHERE name = 'Zed'", 'SELECT name FROM student WHERE age > 99', {
      groupId: 'g1',
    }),
    item('honest-win', 'SELECT name FROM teacher', 'SELECT name FROM teacher', { groupId: 'g1' }),
    // gold that fails: every prediction scores 0
    item('gold-broken-1', 'SELECT nope FROM teacher', 'SELECT name FROM teacher', { groupId: 'g2' }),
    item('gold-broken-2', 'SELECT nope FROM teacher', 'SELECT subject FROM teacher', { groupId: 'g2' }),
    // SELECT * win (gold also selects every column)
    item('star-win', 'SELECT id, name, subject FROM teacher', 'SELECT * FROM teacher', { groupId: 'g3', reward: 1 }),
    item('star-win-2', 'SELECT id, name, subject FROM teacher', 'SELECT id, name, subject FROM teacher', {
      groupId: 'g3',
      reward: 1,
    }),
    // bird mode ignores duplicates: a prediction with the gold rows and extra duplicates wins
    item('dup-win', 'SELECT DISTINCT age FROM student', 'SELECT age FROM student', { mode: 'bird' }),
    item('bad-format', 'SELECT 1', 'SELECT 1', { format: { ok: false, kind: 'missing-think' }, reward: -1 }),
    item('bad-format-2', 'SELECT 1', 'SELECT 2', { format: { ok: false, kind: 'missing-think' }, reward: -1 }),
    item('no-solution', 'SELECT 1', null, { format: { ok: false, kind: 'missing-solution' }, reward: -1 }),
  ]);
  const r = checkIntegrity(items);
  assert.equal(r.items, 10);
  assert.deepEqual(r.emptyGoldWins.items, ['empty-win']);
  assert.equal(r.emptyGoldWins.positives, 6);
  assert.equal(r.emptyGoldWins.share, 1 / 6);
  assert.equal(r.goldFailures.length, 1);
  assert.deepEqual(r.goldFailures[0].items, ['gold-broken-1', 'gold-broken-2']);
  assert.equal(r.goldFailures[0].reason, 'gold-error');
  assert.match(r.goldFailures[0].detail, /no such column: nope/);
  assert.deepEqual(r.formatFailures.byKind, {
    'missing-think': ['bad-format', 'bad-format-2'],
    'missing-solution': ['no-solution'],
  });
  assert.deepEqual(
    r.suspiciousWins.map((s) => s.id),
    ['star-win', 'dup-win'],
  );
  assert.match(r.suspiciousWins[1].why.join(), /all 3 gold rows and 1 more/);
  // g1: the free win and the honest win both score 1.
  assert.deepEqual(
    r.zeroVarianceGroups.map((z) => [z.groupId, z.items]),
    [
      ['g1', ['empty-win', 'honest-win']],
      ['g2', ['gold-broken-1', 'gold-broken-2']],
      ['g3', ['star-win', 'star-win-2']],
    ],
  );

  const lines = integrityFlags(r);
  assert.ok(lines.some((l) => /empty-gold wins: 1 of 6 .*empty-win/.test(l)));
  assert.ok(lines.some((l) => /gold failed .*gold-broken-1, gold-broken-2/.test(l)));
  assert.ok(lines.some((l) => /format failure missing-think: 2 item\(s\): bad-format, bad-format-2/.test(l)));
  assert.ok(lines.some((l) => /suspicious win star-win: uses SELECT \*/.test(l)));
  assert.ok(lines.some((l) => /zero-variance group g3: all 2 samples scored 1/.test(l)));
});

test('a clean run raises no flag', async () => {
  const items = await Promise.all([
    item('a', 'SELECT name FROM teacher', 'SELECT name FROM teacher', { groupId: 'g' }),
    item('b', 'SELECT name FROM teacher', 'SELECT subject FROM teacher', { groupId: 'g' }),
  ]);
  assert.deepEqual(integrityFlags(checkIntegrity(items)), []);
});

test("a timing-out gold is reported as a timeout, not as the prediction's failure", async () => {
  const slow = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
  const quick = createScoringResources({ run: pool, timeoutMs: 300 });
  const verdict = await computeVerdict('SELECT 1', slow, schoolDb, evalMode('spider'), quick);
  assert.equal(verdict.reason, 'gold-timeout');
  const r = checkIntegrity([{ id: 'x', goldSql: slow, predSql: 'SELECT 1', verdict, reward: 0 }]);
  assert.equal(r.goldFailures[0].reason, 'gold-timeout');
  assert.match(integrityFlags(r)[0], /gold timed out .* x/);
});

test('a flag lists each id once, even when several items share it (a group of samples of one question)', async () => {
  const gold = 'SELECT name FROM student WHERE 1 = 0';
  const items = [
    await item('q7', gold, 'SELECT name FROM student WHERE 1 = 0', { groupId: 'g', reward: 1 }),
    await item('q7', gold, 'SELECT name FROM student WHERE 2 = 0', { groupId: 'g', reward: 1 }),
    await item('q8', 'SELECT nope FROM student', 'SELECT name FROM student', { format: { ok: false, kind: 'x' } }),
    await item('q8', 'SELECT nope FROM student', 'SELECT name FROM student', { format: { ok: false, kind: 'x' } }),
  ];
  const flags = integrityFlagItems(checkIntegrity(items));
  assert.ok(flags.length >= 3, JSON.stringify(flags));
  for (const f of flags) {
    assert.deepEqual(f.items, [...new Set(f.items)], f.text);
    for (const id of ['q7', 'q8']) {
      assert.ok((f.text.match(new RegExp(`${id}\\b`, 'g')) ?? []).length <= 1, f.text);
    }
  }
  const zero = flags.find((f) => f.kind === 'zero-variance-group');
  assert.match(zero?.text ?? '', /all 2 samples scored 1 \(no GRPO signal\): q7$/);
});
