// The pure curation pieces of `quarry data`: SQL-Trail's pass@G selection, MTSQL-R1's curriculum levels, the gold
// findings from the integrity flags, the table columns' row checks, and the SFT ordering and de-duplication.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curriculumLevels, selectByDifficulty, type QuestionOutcome } from '../../../src/core/training/difficulty';
import { checkGolds } from '../../../src/core/training/goldChecks';
import { ColumnError, columnType, normalizeRows } from '../../../src/core/training/columns';
import { rlColumns } from '../../../src/core/training/rlRecord';
import { dropRepeatedConversations, hardestFirst, roleLossMismatches } from '../../../src/core/training/sftSelection';
import type { ExecResult } from '../../../src/core/db/types';
import type { SftExample } from '../../../src/core/labels/sft';

const q = (id: string, correct: number, total = 6): QuestionOutcome => ({ id, correct, total });
const outcomes = [q('a', 6), q('b', 1), q('c', 0), q('d', 3), q('e', 5), q('f', 0)];

test('hard-but-solvable keeps 0 < pass@G < 1, S(q) ascending; the rest is dropped with why', () => {
  const s = selectByDifficulty(outcomes, 'hard-but-solvable');
  assert.deepEqual(
    s.kept.map((x) => [x.id, x.pass]),
    [
      ['b', 1 / 6],
      ['d', 0.5],
      ['e', 5 / 6],
    ],
  );
  assert.deepEqual(s.dropped, [
    { id: 'a', reason: 'solved by all 6 samples' },
    { id: 'c', reason: 'unsolved: none of the 6 samples is correct' },
    { id: 'f', reason: 'unsolved: none of the 6 samples is correct' },
  ]);
});

test('unsolved keeps the exploration set (pass@G = 0) in input order; all keeps everything', () => {
  const u = selectByDifficulty(outcomes, 'unsolved');
  assert.deepEqual(
    u.kept.map((x) => x.id),
    ['c', 'f'],
  );
  assert.equal(u.dropped.length, 4);
  assert.match(u.dropped.find((d) => d.id === 'd')!.reason, /solved by 3 of 6 samples/);
  const all = selectByDifficulty(outcomes, 'all');
  assert.deepEqual(
    all.kept.map((x) => x.id),
    ['a', 'b', 'c', 'd', 'e', 'f'],
  );
  assert.deepEqual(all.dropped, []);
});

test('curriculum: solved-by-all discarded, the rest by successes descending in N equal levels', () => {
  const c = curriculumLevels(outcomes, 2);
  assert.deepEqual(
    c.discarded.map((d) => d.id),
    ['a'],
  );
  assert.match(c.discarded[0].reason, /MTSQL-R1 §3\.3\.1/);
  assert.deepEqual(
    c.levels.map((l) => [l.level, l.ids, l.successes]),
    [
      [1, ['e', 'd', 'b'], { min: 1, max: 5 }],
      [2, ['c', 'f'], { min: 0, max: 0 }],
    ],
  );
  assert.equal(curriculumLevels(outcomes, 10).levels.length, 5, 'never more levels than questions');
  assert.throws(() => curriculumLevels(outcomes, 0), RangeError);
  assert.throws(() => curriculumLevels([q('x', 1, 4), q('y', 1, 6)], 2), /different sample counts/);
});

test('curriculum: §3.3.1 "s_i = #{correct out of 20, measured by EX and EM}": a sample counts if right by both', () => {
  // 'a' is right by execution in all 6 samples, but only 2 of them are the gold string: not too easy, and it sorts
  // by its 2 successes; 'e' is right by both in all 6: discarded.
  const both = [
    { ...q('a', 6), correctExEm: 2 },
    { ...q('b', 1), correctExEm: 1 },
    { ...q('e', 6), correctExEm: 6 },
    { ...q('d', 3), correctExEm: 0 },
  ];
  const c = curriculumLevels(both, 1);
  assert.equal(c.countedBy, 'ex+em');
  assert.deepEqual(
    c.discarded.map((d) => d.id),
    ['e'],
  );
  assert.match(c.discarded[0].reason, /\(EX and EM\)/);
  assert.deepEqual(c.levels[0].ids, ['a', 'b', 'd']);
  // A run that recorded no per-sample EM: EX alone, and the curriculum says so.
  assert.equal(curriculumLevels(outcomes, 2).countedBy, 'ex');
});

function result(over: Partial<ExecResult>): ExecResult {
  return {
    ok: true,
    errorClass: null,
    error: null,
    columns: ['x'],
    rows: [[1]],
    rowCount: 1,
    truncated: false,
    ms: 1,
    ...over,
  };
}

test('gold findings: failing and timed-out golds with their reason, empty results apart', () => {
  const f = checkGolds([
    { id: 'ok', gold: 'SELECT 1', result: result({}) },
    { id: 'empty', gold: 'SELECT 1 WHERE 0', result: result({ rows: [], rowCount: 0 }) },
    {
      id: 'bad',
      gold: 'SELECT * FROM nope',
      result: result({ ok: false, errorClass: 'sql', error: 'no such table: nope', rows: [] }),
    },
    {
      id: 'slow',
      gold: 'SELECT slow',
      result: result({ ok: false, errorClass: 'timeout', error: 'timed out', rows: [] }),
    },
  ]);
  assert.deepEqual(
    [...f.failing],
    [
      ['bad', 'gold-error: no such table: nope'],
      ['slow', 'gold-timeout: timed out'],
    ],
  );
  assert.deepEqual([...f.empty], ['empty']);
});

test('rows are checked against the columns: int64 as bigint, absent optionals null, wrong shapes named by path', () => {
  const cols = rlColumns();
  const row = {
    data_source: 'quarry/spider',
    prompt: [{ role: 'user', content: 'q' }],
    ability: 'text2sql',
    reward_model: { style: 'rule', ground_truth: 'SELECT 1' },
    agent_name: 'quarry_agent',
    extra_info: {
      index: 3,
      db_id: 'd',
      db_path: '/d.sqlite',
      question: 'q',
      hardness: null,
      protocol: 'skyrl',
      max_turns: 5,
    },
  };
  const [n] = normalizeRows(cols, [row]);
  const extra = n.extra_info as Record<string, unknown>;
  assert.equal(extra.index, 3n);
  assert.equal(extra.evidence, null);
  assert.equal(extra.history, null);
  const bad = { ...row, extra_info: { ...row.extra_info, history: [{ question: 'a', sql: 7 }] } };
  assert.throws(
    () => normalizeRows(cols, [bad]),
    (e: Error) => e instanceof ColumnError && /extra_info\.history\[0\]\.sql is number/.test(e.message),
  );
  assert.throws(
    () => normalizeRows(cols, [{ ...row, prompt: undefined }]),
    /row 0\.prompt is missing, but the column is required/,
  );
  assert.throws(() => normalizeRows(cols, [{ ...row, extra: 1 }]), /field\(s\) the table does not have: extra/);
  assert.equal(columnType(cols[1]), 'list<struct<role: string, content: string>>');
});

function ex(id: string, texts: string[]): SftExample {
  return {
    schema: 'quarry.sft/1',
    id,
    protocol: 'skyrl',
    question: 'q',
    db: { path: '/d', id: null },
    source: 'as-generated',
    verdict: null,
    tags: [],
    messages: texts.map((t, i) => ({ role: i % 2 ? 'assistant' : 'user', content: t, loss: i % 2 === 1 })),
  };
}

test('SFT: repeated conversations kept once, hardest first with ties in order, role/loss disagreements counted', () => {
  const items = [
    { example: ex('1', ['p', 'a']), hardness: 'easy' as const },
    { example: ex('2', ['p', 'a']), hardness: 'easy' as const },
    { example: ex('3', ['p', 'b']), hardness: null },
    { example: ex('4', ['p', 'c']), hardness: 'extra' as const },
    { example: ex('5', ['p', 'd']), hardness: 'medium' as const },
    { example: ex('6', ['p', 'e']), hardness: 'extra' as const },
  ];
  const { kept, dropped } = dropRepeatedConversations(items);
  assert.deepEqual(dropped, [{ id: '2', reason: 'the same conversation as 1' }]);
  assert.deepEqual(
    hardestFirst(kept).map((c) => c.example.id),
    ['4', '6', '5', '1', '3'],
  );
  const rethink = ex('7', ['p', 'a']);
  rethink.messages.push({ role: 'assistant', content: 'My action is not correct. Let me rethink.', loss: false });
  assert.equal(roleLossMismatches(rethink), 1);
  assert.equal(roleLossMismatches(ex('8', ['p', 'a'])), 0);
});
