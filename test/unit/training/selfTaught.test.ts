// MTSQL-R1 §3.2.2 Algorithm 1, S1-S2, checked by hand on small rollout sets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectRollouts, type Rollout } from '../../../src/core/training/selfTaught';
import { mulberry32 } from '../../../src/core/util/random';

const r = (id: string, turns: number, ex: boolean, em: boolean, text = id): Rollout => ({ id, turns, ex, em, text });

test('S1: only EX ∧ EM trajectories count; none is unsolved', () => {
  assert.deepEqual(selectRollouts([r('a', 1, true, false), r('b', 2, false, true)], 'hard', mulberry32(1)), {
    valid: 0,
    kept: [],
    rule: 'unsolved',
  });
});

test('S2 easy or solved by every rollout: up to two short trajectories (≤ 2 interactions)', () => {
  const easy = selectRollouts(
    [
      r('a', 1, true, true),
      r('b', 2, true, true),
      r('c', 4, true, true),
      r('d', 1, true, true),
      r('x', 1, false, false),
    ],
    'easy',
    mulberry32(7),
  );
  assert.equal(easy.rule, 'easy-or-all-correct');
  assert.equal(easy.valid, 4);
  assert.equal(easy.kept.length, 2);
  assert.ok(
    easy.kept.every((id) => ['a', 'b', 'd'].includes(id)),
    'never the 4-interaction one',
  );
  const all = selectRollouts([r('a', 3, true, true), r('b', 1, true, true)], 'hard', mulberry32(7));
  assert.deepEqual([all.rule, all.kept], ['easy-or-all-correct', ['b']]);
});

test('S2 otherwise: three long trajectories (≥ 2 interactions), far apart', () => {
  const rs = [
    r('short', 1, true, true),
    r('wrong', 3, false, false),
    r('l1', 2, true, true, 'SELECT name FROM singer'),
    r('l1-copy', 2, true, true, 'SELECT name FROM singer'),
    r('l2', 3, true, true, 'SELECT count(*) FROM concert JOIN stadium'),
    r('l3', 4, true, true, 'WITH x AS (SELECT 1) SELECT avg(age) FROM x'),
  ];
  const s = selectRollouts(rs, 'hard', mulberry32(3));
  assert.equal(s.rule, 'hard');
  assert.equal(s.valid, 5);
  assert.deepEqual([...s.kept].sort(), ['l1', 'l2', 'l3'].sort(), 'the copy of l1 is the closest, so it is left out');
});
