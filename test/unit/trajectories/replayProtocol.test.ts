// The replay panel's wire format and message checks: rows packed by column survive the trip unchanged, and a filter
// from the webview is cleaned field by field before the host uses it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  packRows,
  unpackRows,
  sanitizeFilter,
  REPLAY_RULES,
  ROW_QUESTION_CHARS,
  type ToHost,
} from '../../../src/protocol/replay';
import { checkMessage } from '../../../src/protocol/validate';
import { summarizeTrajectory } from '../../../src/core/trajectories/summary';
import { skyrlEpisode } from '../rewards/fixtures';

test('rows: pack → JSON → unpack keeps every field the list shows, with shared strings once', () => {
  const rs = [0, 1, 2, 3].map((i) => skyrlEpisode([], `SELECT ${i}`, { id: `t${i}`, groupId: i < 2 ? 'g0' : 'g1' }));
  rs[1].model = { ...rs[1].model, spec: 'openai:http://x#m' };
  rs[2].task = { ...rs[2].task, question: 'q '.repeat(200) };
  rs[3].end = 'budget';
  const sums = rs.map((r, i) => summarizeTrajectory(r, i, 10 + i, i === 1 ? 'loop' : null));
  sums[0].verdict = 'correct';
  sums[0].verdictSource = 'stored';
  sums[1].verdict = 'incorrect';
  sums[1].verdictSource = 'computed';
  sums[1].reward = -0.25;
  sums[2].verdict = 'correct';
  sums[2].verdictSource = 'computed';
  sums[2].reward = 1;
  const packed = packRows(sums);
  assert.equal(packed.strings.filter((s) => s === 'skyrl').length, 1, 'a repeated string is stored once');
  const rows = unpackRows(JSON.parse(JSON.stringify(packed)));
  assert.equal(rows.length, 4);
  rows.forEach((row, i) => {
    const s = sums[i];
    const want = {
      key: i,
      id: s.id,
      groupId: s.groupId,
      sample: s.sample,
      line: s.line,
      protocol: s.protocol,
      model: s.model,
      db: s.db,
      turns: s.turns,
      errors: s.errors,
      end: s.end,
      verdict: s.verdict,
      verdictSource: s.verdictSource,
      reward: s.reward,
      label: s.label,
    };
    const { question, ...rest } = row;
    assert.deepEqual(rest, want, `row ${i}`);
    assert.ok(question.length <= ROW_QUESTION_CHARS);
    assert.ok(s.question.startsWith(question.replace(/…$/, '')));
  });
  assert.ok(rows[2].question.endsWith('…'));
  assert.equal(rows[3].end, 'budget');
});

test('filter from the webview: known fields of the right type pass, the rest is dropped and named', () => {
  const { filter, dropped } = sanitizeFilter({
    verdict: 'correct',
    protocol: 'skyrl',
    model: 3,
    db: 'x',
    label: '(none)',
    text: 'a'.repeat(5000),
    turnsMin: 2,
    turnsMax: Infinity,
    rewardMin: '0.5',
    rewardMax: -1,
    evil: '<script>',
    turns: null,
  });
  assert.deepEqual(Object.keys(filter).sort(), ['db', 'label', 'protocol', 'rewardMax', 'text', 'turnsMin', 'verdict']);
  assert.equal(filter.text!.length, 1000);
  assert.deepEqual(dropped.sort(), ['evil', 'model', 'rewardMin', 'turnsMax']);
  assert.deepEqual(sanitizeFilter({ verdict: 'maybe' }), { filter: {}, dropped: ['verdict'] });
});

test('messages from the webview are checked against the rules', () => {
  const ok = (m: unknown) => checkMessage<ToHost>(m, REPLAY_RULES).ok;
  assert.ok(ok({ type: 'ready' }));
  assert.ok(ok({ type: 'filter', seq: 3, filter: {} }));
  assert.ok(ok({ type: 'compare', a: 1, b: 2 }));
  assert.ok(!ok({ type: 'compare', a: 1 }));
  assert.ok(!ok({ type: 'select', key: '3' }));
  assert.ok(!ok({ type: 'select', key: NaN }));
  assert.ok(!ok({ type: 'filter', seq: 1, filter: [] }));
  assert.ok(!ok({ type: 'deleteEverything' }));
  assert.ok(!ok('ready'));
});
