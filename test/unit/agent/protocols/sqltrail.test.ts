// SQL-Trail protocol: the App. A.8 prompt, Algorithm 1's observation, invalid-action message and final call, the
// adaptive budget of Eq. 7, and the appendix example parsed turn by turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  sqlTrailProtocol,
  sqlTrailBudget,
  SQLTRAIL_INVALID_MESSAGE,
} from '../../../../src/core/agent/protocols/sqltrail';
import { getProtocol } from '../../../../src/core/agent/protocols';
import { errResult, fixture, okResult, session, splitTurns } from './helpers';

test('registry and defaults: T = 10, adaptive off', () => {
  assert.equal(getProtocol('sqltrail'), sqlTrailProtocol);
  assert.equal(sqlTrailProtocol.defaults.maxTurns, 10);
  assert.equal(sqlTrailProtocol.defaults.adaptive, false);
});

test('adaptive budget follows Eq. 7 thresholds, capped by T', () => {
  assert.equal(sqlTrailBudget('easy', 10), 2);
  assert.equal(sqlTrailBudget('medium', 10), 3);
  assert.equal(sqlTrailBudget('hard', 10), 10);
  assert.equal(sqlTrailBudget('extra', 10), 10);
  assert.equal(sqlTrailBudget(undefined, 10), 10);
  assert.equal(sqlTrailBudget('medium', 2), 2);
  assert.equal(sqlTrailBudget('easy', 1), 1);
  assert.equal(sqlTrailBudget('hard', 0), 1);
});

test('prompt quotes App. A.8 with the schema-selection instructions', () => {
  const p = session(sqlTrailProtocol, {}, { question: 'Name every stadium.' }).start()[0].content;
  assert.ok(p.startsWith('Task Overview:\nYou are a helpful text-to-SQL expert assistant.'));
  assert.match(p, /Database Engine:\nSQLite/);
  assert.match(p, /Table: singer\n- singer_id \(INTEGER, PRIMARY KEY\)/);
  assert.match(p, /Question:\nName every stadium\./);
  assert.match(
    p,
    new RegExp(
      /3\. In your first response, you must identify all tables and columns from the database schem/.source +
        /a that are relevant to answering the question\./.source,
    ),
  );
  assert.match(p, /1\. Conduct thinking inside <reasoning>…<\/reasoning> blocks/);
  assert.match(p, /directly provide the final sql in <solution>…<\/solution>\n-+ START OF EXAMPLE/);
  assert.match(p, /<observation>\n {3}AVG\(price\)\n0 {7}24\.75\n<\/observation>/);
});

test('the appendix example parses to execute then answer', () => {
  const [t1, t2] = splitTurns(fixture('sqltrail', 'a8-example.txt'), '<observation>', /<\/observation>/);
  const s = session(sqlTrailProtocol);
  const a1 = s.parse(t1);
  assert.equal(a1.kind, 'execute');
  assert.equal(a1.sql, 'SELECT AVG(price) FROM products;');
  assert.match(a1.thought ?? '', /Relavent tables and columns:/);
  assert.deepEqual(a1.problems, []);
  const r = s.respond(a1, okResult(['AVG(price)'], [[24.75]]), 9);
  assert.equal(
    r.observations[0].content,
    '<observation>\n   AVG(price)\n0       24.75\nYou have 10 turns left to complete the task.\n</observation>',
  );
  const a2 = s.parse(t2);
  assert.equal(a2.kind, 'answer');
  assert.equal(a2.sql, 'SELECT AVG(price) FROM products;');
  assert.deepEqual(s.respond(a2, null, 8), {
    observations: [],
    done: true,
    end: 'answer',
    finalSql: 'SELECT AVG(price) FROM products;',
  });
});

test('<reasoning> is the thought; an errored SQL gets the invalid message; errorDetail adds the engine text', () => {
  const s = session(sqlTrailProtocol);
  const a = s.parse('<reasoning>tables: singer</reasoning>\n<sql>SELECT nme FROM singer</sql>');
  assert.equal(a.thought, 'tables: singer');
  const r = s.respond(a, errResult('no such column: nme'), 5);
  assert.equal(
    r.observations[0].content,
    `<observation>\n${SQLTRAIL_INVALID_MESSAGE}\nYou have 6 turns left to complete the task.\n</observation>`,
  );
  const d = session(sqlTrailProtocol, { errorDetail: true });
  const r2 = d.respond(
    d.parse('<reasoning>x</reasoning><sql>SELECT nme FROM singer</sql>'),
    errResult('no such column: nme'),
    5,
  );
  assert.match(r2.observations[0].content, /Think and try again\.\nno such column: nme\nYou have 6 turns left/);
  const next = s.parse('<reasoning>fix</reasoning><sql>SELECT name FROM singer</sql>');
  assert.deepEqual(next.mdp, ['SELF-CORRECT', 'EXECUTE']);
});

test(
  'Algorithm 1 (lines 10, 15-29): a turn stopped at </reasoning> with no action uses up a turn and gets no ' +
    'observation',
  () => {
    const s = session(sqlTrailProtocol);
    assert.deepEqual(s.stop(), ['</sql>', '</solution>', '</reasoning>'], 'line 10: </reasoning> ends a turn');
    const a = s.parse('<reasoning>I should look at the singer table first.</reasoning>');
    assert.equal(a.kind, 'invalid');
    assert.deepEqual(a.problems, [
      'no <sql> or <solution> block ("<reasoning>I should look at the singer table first.</reason…")',
    ]);
    assert.equal(a.thought, 'I should look at the singer table first.');
    assert.deepEqual(s.respond(a, null, 3), { observations: [], done: false, end: null, finalSql: null });
    // An <sql> block whose query fails is line 21-22's invalid result: that one gets the message.
    const bad = s.parse('<reasoning>x</reasoning><sql></sql>');
    assert.match(
      s.respond(bad, null, 3).observations[0].content,
      /^<observation>\nYour previous action is invalid\. Think and try again\.\nYou have 4 turns left/,
    );
  },
);

test(
  'budget exhausted: last observation says 1 turn left, ' + 'then the final call (Algorithm 1 line 31) must answer',
  () => {
    const s = session(sqlTrailProtocol);
    const a = s.parse('<reasoning>x</reasoning><sql>SELECT 1</sql>');
    const r = s.respond(a, okResult(['1'], [[1]]), 0);
    assert.equal(r.done, true);
    assert.equal(r.end, 'budget');
    assert.match(r.observations[0].content, /You have 1 turns left to complete the task\./);
    assert.deepEqual(s.stop(), ['</sql>', '</solution>', '</reasoning>']);
    // Line 31: the final <solution> is generated from the history alone — no message is added.
    assert.equal(s.finalCall(), 'history');
    assert.deepEqual(s.stop(), ['</solution>']);
    const fin = s.parse('<reasoning>ok</reasoning><solution>SELECT 1</solution>');
    assert.equal(fin.kind, 'answer');
    const sqlOnly = s.parse('<reasoning>ok</reasoning><sql>SELECT 2</sql>');
    assert.equal(sqlOnly.kind, 'answer');
    assert.equal(sqlOnly.sql, 'SELECT 2');
    assert.match(sqlOnly.problems[0], /final generation gave <sql> instead of <solution>/);
  },
);
