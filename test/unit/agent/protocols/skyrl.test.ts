// SkyRL-SQL protocol: the App. A prompt and its D.1/D.2 variants, parsing of the paper's own traces (App. A, C.1–C.5),
// skyrl-gym's observation with the turns-left reminder, the invalid-action message, and restoring stripped stops.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { skyrlProtocol, SKYRL_INVALID_MESSAGE, SKYRL_STOPS } from '../../../../src/core/agent/protocols/skyrl';
import { getProtocol } from '../../../../src/core/agent/protocols';
import { createSqlPool } from '../../../../src/core/db';
import { concertDb, errResult, fixture, okResult, session, splitTurns } from './helpers';

const turnsOf = (name: string) => splitTurns(fixture('skyrl', name), '<observation>', /<\/observation>|observation>/);

test('registry returns the skyrl protocol with the paper defaults', () => {
  assert.equal(getProtocol('skyrl'), skyrlProtocol);
  assert.equal(skyrlProtocol.defaults.maxTurns, 5);
  assert.equal(skyrlProtocol.defaults.thinking, false);
  assert.equal(skyrlProtocol.defaults.noSchema, false);
  assert.deepEqual(session(skyrlProtocol).stop(), SKYRL_STOPS);
});

test('prompt quotes App. A and carries the task', () => {
  const [msg, ...rest] = session(
    skyrlProtocol,
    {},
    { question: 'List all singer names.', evidence: 'singers are people' },
  ).start();
  assert.equal(rest.length, 0);
  assert.equal(msg.role, 'user');
  const p = msg.content;
  assert.ok(
    p.startsWith(
      'Task Overview:\nYou are a data science expert. Below, you are provided with a database schema and ' +
        'a natural language question.',
    ),
  );
  assert.match(p, /Database Engine: SQLite/);
  assert.match(p, /create table singer \(/i);
  assert.match(p, /This schema describes the database's structure/);
  assert.match(p, /External Knowledge:\nsingers are people/);
  assert.match(p, /Question: List all singer names\./);
  assert.match(p, /analisying questions/);
  assert.match(
    p,
    /- Conduct thinking inside <think>\.\.\.<\/think> blocks every time you get new observation or information\./,
  );
  assert.match(p, /The returned dataframe will be truncated in 50 rows if observation is too long\./);
  assert.match(p, /you MUST directly provide the final SQL query solution inside <solution>\.\.\.<\/solution>\./);
  assert.match(
    p,
    new RegExp(
      /START OF EXAMPLE[\s\S]*<think>I am querying how many pigs[\s\S]*<solution>SELECT COUNT/.source +
        /\(\*\) FROM animals WHERE species = 'pig';<\/solution>\n-+ END OF EXAMPLE/.source,
    ),
  );
});

test('thinking variant (App. D.2) drops the think instruction and the example thoughts', () => {
  const p = session(skyrlProtocol, { thinking: true }).start()[0].content;
  assert.doesNotMatch(p, /Conduct thinking inside/);
  assert.doesNotMatch(p, /<think>/);
  assert.match(p, /Format:\n- You can use SQL tool written within a single <sql>your sql<\/sql> block/);
});

test('no-schema variant (App. D.1) shows table names only', () => {
  const p = session(skyrlProtocol, { noSchema: true }).start()[0].content;
  assert.match(p, /You are a data science expert\. Below, you are provided with a natural language question\./);
  assert.match(
    p,
    new RegExp(
      /Database Schema:\nYou are not provided with the database schema and the table names\. You ne/.source +
        /ed to figure out the database structure by yourself with the table names\. stadium\nsinger/.source +
        /\nconcert\nsinger_in_concert/.source,
    ),
  );
  assert.doesNotMatch(p, /create table/i);
});

test('App. A example turns parse to execute then answer', () => {
  const s = session(skyrlProtocol);
  const [t1, t2] = turnsOf('appA-example.txt');
  const a1 = s.parse(t1);
  assert.equal(a1.kind, 'execute');
  assert.equal(a1.sql, "SELECT COUNT(*) FROM animals WHERE species =\n'pig';");
  assert.match(a1.thought ?? '', /^I am querying how many pigs/);
  assert.deepEqual(a1.mdp, ['PROPOSE', 'EXECUTE']);
  // The appendix prints the example's schema lines just before the model's first turn.
  assert.ok(a1.problems.some((p) => /reasoning outside <think>/.test(p)));
  const a2 = s.parse(t2);
  assert.equal(a2.kind, 'answer');
  assert.equal(a2.sql, "SELECT COUNT(*) FROM animals WHERE species =\n'pig';");
  assert.deepEqual(a2.mdp, ['FINALIZE']);
  assert.deepEqual(a2.problems, []);
});

test('C.1 trace: second turn has an OCR-damaged </think> and is cut off inside <sql>', () => {
  const s = session(skyrlProtocol);
  const [t1, t2] = turnsOf('c1-step-by-step.txt');
  const a1 = s.parse(t1);
  assert.equal(a1.kind, 'execute');
  assert.equal(a1.sql, 'SELECT StuID FROM Has_Pet;');
  assert.deepEqual(a1.problems, []);
  const a2 = s.parse(t2);
  assert.equal(a2.kind, 'execute');
  assert.equal(a2.sql, 'SELECT hp.StuID FROM Has_Pet hp\n        JOIN Pets p ON hp.PetID = p.PetID');
  assert.match(a2.thought ?? '', /^I have the list of students who have pets/);
  assert.ok(a2.problems.includes('unclosed <sql>: taken to the end of the text'));
  assert.ok(a2.problems.includes('unclosed <think>'));
});

test('C.2 trace: a first SQL without thinking, then a PRAGMA after the error is a self-correction', () => {
  const s = session(skyrlProtocol);
  const [t1, t2] = turnsOf('c2-syntax-correction.txt');
  const a1 = s.parse(t1);
  assert.equal(a1.kind, 'execute');
  assert.match(a1.sql ?? '', /^SELECT Collection_Subset_Details\n/);
  assert.deepEqual(a1.problems, ['no <think> block']);
  const r1 = s.respond(a1, errResult('no such column: Collection_Subset_Details'), 4);
  assert.equal(
    r1.observations[0].content,
    '<observation>OperationalError: no such column: Collection_Subset_Details\n<reminder>You have 4 turns ' +
      'left to complete the task.</reminder></observation>',
  );
  const a2 = s.parse(t2);
  assert.equal(a2.sql, 'PRAGMA table_info(Collection_Subsets);');
  assert.deepEqual(a2.mdp, ['SELF-CORRECT', 'EXECUTE']);
  assert.ok(a2.problems.includes('3 characters after </sql> ignored'));
});

test("C.3 trace: the corrected query spans the paper's two code blocks", () => {
  const [t1, t2] = turnsOf('c3-logic-correction.txt');
  const s = session(skyrlProtocol);
  assert.match(s.parse(t1).sql ?? '', /ORDER BY s\.semester_id;$/);
  const a2 = s.parse(t2);
  assert.equal(a2.kind, 'execute');
  assert.match(
    a2.sql ?? '',
    /^SELECT s\.semester name[\s\S]*GROUP BY se2\.semester_id\)\)\n\nORDER BY s\.semester_id;$/,
  );
});

test('C.4 trace: <sql> written inside an unclosed <think> still runs', () => {
  const [t1] = turnsOf('c4-overconfidence.txt');
  const a = session(skyrlProtocol).parse(t1);
  assert.equal(a.kind, 'execute');
  assert.equal(a.sql, 'SELECT DISTINCT title\n        FROM Paintings\n        ORDER BY height_mm * width_mm;');
  assert.ok(a.problems.includes('unclosed <think>'));
  assert.ok(a.problems.includes('the <sql> block is inside a reasoning block'));
});

test('C.5 trace: three executes in a loop; repeated errors keep them self-corrections', () => {
  const turns = turnsOf('c5-loop.txt');
  assert.equal(turns.length, 3);
  const s = session(skyrlProtocol);
  const labels = turns.map((t, i) => {
    const a = s.parse(t);
    assert.equal(a.kind, 'execute');
    s.respond(a, errResult('no such column: T1.room_count'), 4 - i);
    return a.mdp[0];
  });
  assert.deepEqual(labels, ['PROPOSE', 'SELF-CORRECT', 'SELF-CORRECT']);
});

test('observation: df format with index, reminder, 50-row truncation past 9000 characters', () => {
  const s = session(skyrlProtocol);
  const a = s.parse('<think>t</think><sql>SELECT name FROM singer</sql>');
  const r = s.respond(a, okResult(['name'], [['Ann'], ['Bob']]), 3);
  assert.equal(r.done, false);
  assert.equal(r.observations[0].role, 'user');
  assert.equal(
    r.observations[0].content,
    '<observation>  name\n0  Ann\n1  Bob\n<reminder>You have 3 turns left to complete the ' +
      'task.</reminder></observation>',
  );
  const many = okResult(
    ['v'],
    Array.from({ length: 2000 }, (_, i) => ['x'.repeat(20) + i]),
  );
  const big = s.respond(s.parse('<think>t</think><sql>SELECT v FROM t</sql>'), many, 2).observations[0].content;
  assert.ok(big.length < 9000 + 200);
  assert.match(big, /showing 50 of 2000 rows/);
  assert.match(big, /\n49 +x{20}49\n/);
});

test("invalid turn gets skyrl-gym's message; out of turns ends without observation; answer ends the episode", () => {
  const s = session(skyrlProtocol);
  const bad = s.parse('I think the answer is 3.');
  assert.equal(bad.kind, 'invalid');
  assert.deepEqual(bad.problems, [
    'no <sql> or <solution> block ("I think the answer is 3.")',
    'no <think> block; the text taken as the thought',
  ]);
  assert.equal(
    s.respond(bad, null, 2).observations[0].content,
    `<observation>${SKYRL_INVALID_MESSAGE}\n<reminder>You have 2 turns left to complete the ` +
      `task.</reminder></observation>`,
  );
  assert.deepEqual(s.respond(bad, null, 0), { observations: [], done: true, end: 'budget', finalSql: null });
  const ans = s.parse('<think>done</think><solution>SELECT 1</solution>');
  assert.deepEqual(s.respond(ans, null, 2), { observations: [], done: true, end: 'answer', finalSql: 'SELECT 1' });
  assert.equal(s.finalCall(), null);
});

test('restoreStop appends the stripped stop string, known or inferred', () => {
  const s = session(skyrlProtocol);
  assert.equal(s.restoreStop('<think>x</think><sql>SELECT 1', '</sql>', 'stop'), '<think>x</think><sql>SELECT 1</sql>');
  assert.equal(
    s.restoreStop('<think>x</think><sql>SELECT 1</sql>', '</sql>', 'stop'),
    '<think>x</think><sql>SELECT 1</sql>',
  );
  assert.equal(
    s.restoreStop('<sql>SELECT 1</sql><solution>SELECT 2', null, 'stop'),
    '<sql>SELECT 1</sql><solution>SELECT 2</solution>',
  );
  assert.equal(s.restoreStop('<sql>SELECT 1', null, 'length'), '<sql>SELECT 1');
  assert.equal(s.restoreStop('no tags', null, 'stop'), 'no tags');
  const restored = s.parse(s.restoreStop('<think>x</think><sql>SELECT 1', '</sql>', 'stop'));
  assert.deepEqual(restored.problems, []);
});

const pool = createSqlPool({ size: 1 });
after(() => pool.close());

test('end to end against the real sandbox: an error then a result', async () => {
  const db = concertDb().path;
  const s = session(skyrlProtocol);
  const a1 = s.parse('<think>x</think><sql>SELECT nme FROM singer</sql>');
  const r1 = s.respond(a1, await pool.exec({ db, sql: a1.sql! }), 4);
  assert.match(r1.observations[0].content, /^<observation>OperationalError: no such column: nme\n<reminder>/);
  const a2 = s.parse('<think>fix</think><sql>SELECT count(*) FROM singer</sql>');
  assert.deepEqual(a2.mdp, ['SELF-CORRECT', 'EXECUTE']);
  const r2 = s.respond(a2, await pool.exec({ db, sql: a2.sql! }), 3);
  assert.match(r2.observations[0].content, /^<observation> {3}count\(\*\)\n0 +\d+\n<reminder>You have 3 turns left/);
});

test('thinking models: a turn that starts inside <think> (template-opened) keeps its thought', () => {
  const s = session(skyrlProtocol, { thinking: true });
  const a = s.parse('The singer table has the rows.\n</think>\n\n<sql>SELECT count(*) FROM singer</sql>');
  assert.equal(a.kind, 'execute');
  assert.equal(a.thought, 'The singer table has the rows.');
  assert.deepEqual(a.problems, [
    'no opening <think> before </think> (a chat template may have opened it); the text before it is the thought',
  ]);
  const plain = s.parse('<sql>SELECT 1</sql>');
  assert.deepEqual(plain.problems, []);
});
