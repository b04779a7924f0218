// Summaries, filters and facets behind the replay list; the SQL diff and turn alignment behind its compare view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  summarizeTrajectory,
  filterSummaries,
  facets,
  searchText,
  storedVerdict,
  defaultPanelFor,
  groupKeys,
  dbLabel,
  NO_LABEL,
  SUMMARY_TEXT_CHARS,
  type TrajectorySummary,
} from '../../../src/core/trajectories/summary';
import { diffSql, sameSql, sqlTokens, alignTurns } from '../../../src/core/trajectories/compare';
import { trajectory, skyrlEpisode } from '../rewards/fixtures';
import type { TrajectoryRecord } from '../../../src/core/trajectories/types';

function rec(
  over: Partial<TrajectoryRecord> & { question?: string; dbId?: string | null; gold?: string | null },
): TrajectoryRecord {
  const r = skyrlEpisode(['SELECT 1'], over.finalSql ?? 'SELECT name FROM student');
  const out: TrajectoryRecord = { ...r, ...over };
  out.task = {
    ...r.task,
    question: over.question ?? r.task.question,
    gold: over.gold === undefined ? r.task.gold : over.gold,
    db: { ...r.task.db, id: over.dbId === undefined ? r.task.db.id : over.dbId },
  };
  return out;
}

test('summary: the list fields come from the record; the question and SQL are clipped to one line', () => {
  const long = 'How many students are older than twenty?\n' + 'x'.repeat(400);
  const r = rec({
    id: 'a',
    groupId: 'g',
    sample: 2,
    question: long,
    finalSql: 'SELECT  *\nFROM student',
    gold: 'SELECT 1',
  });
  r.turns[0].exec = {
    ok: false,
    errorClass: 'sql',
    error: 'no such table',
    columns: [],
    rowCount: 0,
    truncated: false,
    ms: 1,
  };
  const s = summarizeTrajectory(r, 7, 12, 'wrong join');
  assert.equal(s.key, 7);
  assert.equal(s.line, 12);
  assert.equal(s.id, 'a');
  assert.equal(s.groupId, 'g');
  assert.equal(s.sample, 2);
  assert.equal(s.question.length, SUMMARY_TEXT_CHARS);
  assert.ok(s.question.startsWith('How many students are older than twenty? xxx'));
  assert.ok(s.question.endsWith('…'));
  assert.equal(s.finalSql, 'SELECT * FROM student');
  assert.equal(s.protocol, 'skyrl');
  assert.equal(s.model, 'test');
  assert.equal(s.db, 'school');
  assert.equal(s.turns, 2);
  assert.equal(s.errors, 1);
  assert.equal(s.hasGold, true);
  assert.equal(s.label, 'wrong join');
  assert.equal(s.verdict, null);
  assert.equal(s.reward, null);
});

test('summary: the database is named by its id, else by its file name', () => {
  assert.equal(dbLabel(rec({ dbId: 'concert' })), 'concert');
  const r = rec({ dbId: null });
  r.task.db.path = '/data/x/orchard.sqlite';
  assert.equal(dbLabel(r), 'orchard.sqlite');
  r.task.db.path = 'C:\\data\\clinic.db';
  assert.equal(dbLabel(r), 'clinic.db');
});

test('stored verdicts: meta.correct, meta.verdict and meta.ex; anything else is not evaluated', () => {
  assert.equal(storedVerdict(rec({ meta: { correct: true } })), 'correct');
  assert.equal(storedVerdict(rec({ meta: { correct: false } })), 'incorrect');
  assert.equal(storedVerdict(rec({ meta: { verdict: 'incorrect' } })), 'incorrect');
  assert.equal(storedVerdict(rec({ meta: { ex: 1 } })), 'correct');
  assert.equal(storedVerdict(rec({ meta: { ex: 0 } })), 'incorrect');
  assert.equal(storedVerdict(rec({ meta: { ex: 0.5, correct: 'yes' } })), null);
  assert.equal(storedVerdict(rec({ meta: {} })), null);
  const s = summarizeTrajectory(rec({ meta: { correct: true } }), 0, 1);
  assert.equal(s.verdict, 'correct');
  assert.equal(s.verdictSource, 'stored');
});

function listOf(): { records: TrajectoryRecord[]; summaries: TrajectorySummary[] } {
  const records = [
    rec({ id: 'r0', question: 'Names of students', finalSql: 'SELECT name FROM student', meta: { correct: true } }),
    rec({
      id: 'r1',
      question: 'Oldest teacher',
      finalSql: 'SELECT name FROM teacher ORDER BY age DESC',
      meta: { correct: false },
    }),
    rec({ id: 'r2', question: 'Count classes', finalSql: 'SELECT count(*) FROM class', dbId: 'other' }),
    rec({ id: 'r3', question: 'Salary of Eve', finalSql: "SELECT Salary FROM Employees WHERE name = 'Eve'" }),
  ];
  records[1].protocol = { ...records[1].protocol, name: 'sqltrail' };
  records[2].model = { ...records[2].model, spec: 'openai:http://x#qwen' };
  records[3].turns.push(records[3].turns[0], records[3].turns[0]);
  records[3].turns[0] = {
    ...records[3].turns[0],
    action: { ...records[3].turns[0].action, sql: 'SELECT hidden_column FROM Employees' },
  };
  const labels = ['good', null, 'good', 'wrong join'];
  const summaries = records.map((r, i) => summarizeTrajectory(r, i, i + 1, labels[i]));
  summaries[0].reward = 1;
  summaries[1].reward = -0.5;
  summaries[3].reward = 0.25;
  return { records, summaries };
}

test('filter: each filter keeps exactly the matching rows, and filters combine', () => {
  const { records, summaries } = listOf();
  const hay = records.map(searchText);
  const f = (filter: Parameters<typeof filterSummaries>[1]) => filterSummaries(summaries, filter, hay);
  assert.deepEqual(f({}), [0, 1, 2, 3]);
  assert.deepEqual(f({ verdict: 'correct' }), [0]);
  assert.deepEqual(f({ verdict: 'incorrect' }), [1]);
  assert.deepEqual(f({ verdict: 'unscored' }), [2, 3]);
  assert.deepEqual(f({ protocol: 'sqltrail' }), [1]);
  assert.deepEqual(f({ model: 'openai:http://x#qwen' }), [2]);
  assert.deepEqual(f({ db: 'other' }), [2]);
  assert.deepEqual(f({ label: 'good' }), [0, 2]);
  assert.deepEqual(f({ label: NO_LABEL }), [1]);
  assert.deepEqual(f({ turnsMin: 3 }), [3]);
  assert.deepEqual(f({ turnsMax: 2 }), [0, 1, 2]);
  assert.deepEqual(f({ rewardMin: 0 }), [0, 3], 'unscored rows drop out of a reward range');
  assert.deepEqual(f({ rewardMin: -1, rewardMax: 0.5 }), [1, 3]);
  assert.deepEqual(f({ text: 'TEACHER' }), [1]);
  assert.deepEqual(f({ text: 'select   employees' }), [3], 'every word must occur');
  assert.deepEqual(f({ text: 'hidden_column' }), [3], "search sees every turn's SQL, not only the final one");
  assert.deepEqual(f({ text: 'r2' }), [2], 'and the trajectory id');
  assert.deepEqual(f({ text: 'nowhere' }), []);
  assert.deepEqual(f({ label: 'good', protocol: 'skyrl', text: 'class' }), [2]);
  assert.deepEqual(
    f({ protocol: '', model: '', verdict: 'any', turnsMin: null, rewardMax: null }),
    [0, 1, 2, 3],
    'empty means any',
  );
  // Without haystacks, the text search falls back to the summary's own (clipped) text.
  assert.deepEqual(filterSummaries(summaries, { text: 'hidden_column' }), []);
});

test('facets: values with counts (most common first), ranges and verdict counts', () => {
  const { summaries } = listOf();
  const fc = facets(summaries);
  assert.deepEqual(fc.protocols, [
    { value: 'skyrl', count: 3 },
    { value: 'sqltrail', count: 1 },
  ]);
  assert.deepEqual(
    fc.models.map((m) => m.value),
    ['test', 'openai:http://x#qwen'],
  );
  assert.deepEqual(fc.dbs, [
    { value: 'school', count: 3 },
    { value: 'other', count: 1 },
  ]);
  assert.deepEqual(fc.labels, [
    { value: 'good', count: 2 },
    { value: NO_LABEL, count: 1 },
    { value: 'wrong join', count: 1 },
  ]);
  assert.deepEqual(fc.turns, { min: 2, max: 4 });
  assert.deepEqual(fc.verdicts, { correct: 1, incorrect: 1, unscored: 2 });
  assert.deepEqual(fc.reward, { min: -0.5, max: 1 });
  assert.deepEqual(facets([]).reward, null);
  assert.deepEqual(facets([]).turns, { min: 0, max: 0 });
});

test('groups: members of groups of two or more, in sample order', () => {
  const rs = [
    rec({ id: 'a1', groupId: 'A', sample: 1 }),
    rec({ id: 'b0', groupId: 'B', sample: 0 }),
    rec({ id: 'a0', groupId: 'A', sample: 0 }),
    rec({ id: 'c', groupId: 'c', sample: 0 }),
    rec({ id: 'b1', groupId: 'B', sample: 1 }),
  ];
  const g = groupKeys(rs.map((r, i) => summarizeTrajectory(r, i, i + 1)));
  assert.deepEqual(
    [...g],
    [
      ['A', [2, 0]],
      ['B', [1, 4]],
    ],
  );
});

test('default panel follows the protocol', () => {
  for (const p of ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress']) assert.equal(defaultPanelFor(p), p);
  assert.equal(defaultPanelFor('something-else'), 'skyrl');
});

test('sql diff: tokens rebuild the text; the diff marks only what changed, ignoring case and spacing', () => {
  const a = "SELECT name FROM student WHERE age > 20 AND name != 'Bo'";
  assert.equal(sqlTokens(a).join(''), a);
  assert.deepEqual(sqlTokens('a<=b'), ['a', '<=', 'b']);
  const d = diffSql(
    'SELECT name FROM student WHERE age > 20',
    'select name  from student where age >= 21 ORDER BY name',
  );
  const removed = d.filter((p) => p.op === 'removed').map((p) => p.a.trim());
  const added = d.filter((p) => p.op === 'added').map((p) => p.b.trim());
  assert.deepEqual(removed, ['> 20']);
  assert.deepEqual(added, ['>= 21 ORDER BY name']);
  assert.equal(d.map((p) => p.b).join(''), 'select name  from student where age >= 21 ORDER BY name');
  assert.equal(d.map((p) => p.a).join(''), 'SELECT name FROM student WHERE age > 20');
  assert.ok(sameSql('SELECT  a FROM t', 'select a\nfrom T'));
  assert.ok(!sameSql("SELECT 'A'", "SELECT 'a'"), 'string literals keep their case');
  assert.ok(sameSql(null, null));
  assert.ok(!sameSql('SELECT 1', null));
  assert.deepEqual(diffSql('', 'SELECT 1'), [{ op: 'added', a: '', b: 'SELECT 1' }]);
});

test('turn alignment pairs turns by index and pads the shorter side', () => {
  const rows = alignTurns(['a0', 'a1', 'a2'], ['b0']);
  assert.deepEqual(rows, [
    { index: 0, a: 'a0', b: 'b0' },
    { index: 1, a: 'a1', b: null },
    { index: 2, a: 'a2', b: null },
  ]);
  assert.deepEqual(alignTurns([], []), []);
});

test('summaries of a real-shaped record validate round trip through the fixture builder', () => {
  const r = trajectory({
    turns: [{ assistant: '<solution>SELECT 1</solution>', kind: 'answer', sql: 'SELECT 1' }],
    finalSql: 'SELECT 1',
  });
  const s = summarizeTrajectory(r, 0, 1);
  assert.equal(s.hasGold, false);
  assert.equal(s.turns, 1);
  assert.equal(s.end, 'answer');
});
