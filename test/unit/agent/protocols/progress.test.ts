// Progress-SQL protocol: App. F prompts, the Round 2+ feedback template around the oracle's diagnostics, Algorithm 1's
// stopping rule (first match, or T = 4 with the last SQL as final), and App. G's three-round case study.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  progressProtocol,
  formatProgressFeedback,
  progressFeedbackMessage,
  PROGRESS_EVAL_CONFIG,
  PROGRESS_INVALID_MESSAGE,
  PROGRESS_REQUIRES,
} from '../../../../src/core/agent/protocols/progress';
import { getProtocol } from '../../../../src/core/agent/protocols';
import type { FeedbackSource } from '../../../../src/core/agent/protocol';
import { fixture, okResult, session } from './helpers';

const GOLD = 'SELECT count(*) FROM singer';
// A real (if simple) oracle for these tests: match on normalised text, else name the clauses that differ.
const oracle: FeedbackSource = (pred, t) => {
  const norm = (s: string) => s.replace(/\s+/g, ' ').replace(/;\s*$/, '').trim().toLowerCase();
  if (norm(pred) === norm(t.gold ?? '')) return null;
  return /count/i.test(pred)
    ? 'FROM_OR_JOIN_TABLE_MISMATCH, FROM/JOIN tables differ from expected.'
    : 'SELECT_ERROR, SELECT projection differs from reference.';
};

test('registry, defaults (T = 4), no stop strings', () => {
  assert.equal(getProtocol('progress'), progressProtocol);
  assert.equal(progressProtocol.defaults.maxTurns, 4);
  assert.deepEqual(session(progressProtocol, {}, { gold: GOLD }, oracle).stop(), []);
});

test('create refuses without gold SQL or without a feedback source', () => {
  assert.throws(() => session(progressProtocol, {}, { gold: GOLD }), { message: PROGRESS_REQUIRES });
  assert.throws(() => session(progressProtocol, {}, {}, oracle), { message: PROGRESS_REQUIRES });
  assert.throws(() => session(progressProtocol, {}, { gold: '  ' }, oracle), { message: PROGRESS_REQUIRES });
});

test('App. F prompts', () => {
  const [sys, user] = session(
    progressProtocol,
    {},
    { gold: GOLD, question: 'How many singers are there?' },
    oracle,
  ).start();
  assert.equal(sys.role, 'system');
  assert.match(
    sys.content,
    /^Task Overview:\nYou are a data science expert\. The user message contains the database schema/,
  );
  assert.match(sys.content, /Database Engine:\nSQLite\n/);
  assert.match(sys.content, /conforms to the specific syntax and functions of the provided SQLite\./);
  assert.match(sys.content, /<think> Your step-by-step reasoning here\. <\/think> <sql> SELECT \.\.\. <\/sql>$/);
  assert.match(user.content, /^Database Schema:\ncreate table stadium/);
  assert.match(
    user.content,
    new RegExp(
      /This schema describes the database’s structure, including tables, columns, primary keys, for/.source +
        /eign keys, and any relevant relationships or constraints\.\nQuestion:\nHow many singers are /.source +
        /there\?$/.source,
    ),
  );
});

test('App. F: "{db_details} contains the DDL schema of the target database": DDL alone, rows only when asked', () => {
  const user = (config = {}) => session(progressProtocol, config, { gold: GOLD }, oracle).start()[1].content;
  assert.match(user(), /create table singer/);
  assert.doesNotMatch(user(), /example rows/, 'no example rows by default');
  assert.match(user({ sampleRows: 2 }), /\/\*\n\d+ example rows? from table singer:/);
});

test('feedback template: codes and descriptions, or a finished message passed through', () => {
  assert.equal(
    formatProgressFeedback(['JOIN_KEY_MISMATCH', 'SELECT_ERROR'], ['SELECT projection differs from reference.']),
    'Feedback: your previous SQL has structural issues: JOIN_KEY_MISMATCH, SELECT_ERROR, SELECT ' +
      'projection differs from reference. . ' +
      'Revise your previous answer using these issues. Revise your previous answer for SQLite. Put ' +
      'step-by-step reasoning inside <think>...</think>, ' +
      'then output exactly one corrected SQLite query inside <sql>...</sql>. Do not output any text ' +
      'outside those tags.',
  );
  assert.equal(progressFeedbackMessage('Feedback: already complete.'), 'Feedback: already complete.');
  assert.match(
    progressFeedbackMessage('GROUP_BY_ERROR, x'),
    /^Feedback: your previous SQL has structural issues: GROUP_BY_ERROR, x \. Revise/,
  );
});

test('rollout: feedback while wrong, ends at the first match', () => {
  const s = session(progressProtocol, {}, { gold: GOLD }, oracle);
  const a1 = s.parse('<think>names</think> <sql>SELECT name FROM singer</sql>');
  assert.deepEqual(a1.mdp, ['PROPOSE', 'EXECUTE']);
  const r1 = s.respond(a1, okResult(['name'], [['Ann']]), 3);
  assert.equal(r1.done, false);
  assert.match(
    r1.observations[0].content,
    new RegExp(
      /^Feedback: your previous SQL has structural issues: SELECT_ERROR, SELECT projection differs /.source +
        /from reference\. \. Revise/.source,
    ),
  );
  const a2 = s.parse('<think>count them</think> <sql>SELECT count(*) FROM singer;</sql>');
  assert.deepEqual(a2.mdp, ['SELF-CORRECT', 'EXECUTE']);
  assert.deepEqual(s.respond(a2, okResult(['count(*)'], [[3]]), 2), {
    observations: [],
    done: true,
    end: 'answer',
    finalSql: 'SELECT count(*) FROM singer;',
  });
});

test('budget spent: the last SQL is final even though it is wrong', () => {
  const s = session(progressProtocol, {}, { gold: GOLD }, oracle);
  const a = s.parse('<think>x</think><sql>SELECT name FROM singer</sql>');
  assert.deepEqual(s.respond(a, null, 0), {
    observations: [],
    done: true,
    end: 'budget',
    finalSql: 'SELECT name FROM singer',
  });
  assert.equal(s.finalCall(), null);
});

test(
  "feedback: 'none' is the paper's evaluation protocol: App. F's prompt, one answer is final, no gold or " +
    'oracle read',
  () => {
    // §5: "ODT is used only during training for feedback construction and progressive reward computation; evaluation
    // follows standard single-turn inference without ODT feedback".
    assert.deepEqual({ ...PROGRESS_EVAL_CONFIG }, { maxTurns: 1, feedback: 'none' });
    const asked: string[] = [];
    const spy: FeedbackSource = (pred) => {
      asked.push(pred);
      return 'SELECT_ERROR, x';
    };
    const withGold = session(progressProtocol, { ...PROGRESS_EVAL_CONFIG }, { gold: GOLD }, spy);
    const withoutGold = session(progressProtocol, { ...PROGRESS_EVAL_CONFIG }, {});
    assert.deepEqual(withGold.start(), withoutGold.start(), 'the prompt does not depend on the gold');
    assert.equal(withoutGold.start()[1].content.includes(GOLD), false);
    const wrong = withGold.parse('<think>names</think> <sql>SELECT name FROM singer</sql>');
    // Turns left or not, a wrong answer is final: no feedback, no second turn.
    assert.deepEqual(withGold.respond(wrong, okResult(['name'], [['Ann']]), 3), {
      observations: [],
      done: true,
      end: 'answer',
      finalSql: 'SELECT name FROM singer',
    });
    assert.deepEqual(asked, [], 'the oracle is never asked');
    const none = withoutGold.parse('I would count the singers.');
    assert.deepEqual(withoutGold.respond(none, null, 3), {
      observations: [],
      done: true,
      end: 'invalid',
      finalSql: null,
    });
    assert.throws(
      () => session(progressProtocol, { feedback: 'sometimes' }, { gold: GOLD }, oracle),
      /feedback must be 'oracle' or 'none', got "sometimes"/,
    );
  },
);

test('malformed turns: no sql, several sql, text outside tags', () => {
  const s = session(progressProtocol, {}, { gold: GOLD }, oracle);
  const none = s.parse('I would count the singers.');
  assert.equal(none.kind, 'invalid');
  assert.deepEqual(s.respond(none, null, 2).observations, [{ role: 'user', content: PROGRESS_INVALID_MESSAGE }]);
  const two = s.parse('<think>draft</think><sql>SELECT 1</sql> hmm <sql>SELECT count(*) FROM singer</sql>');
  assert.equal(two.sql, 'SELECT count(*) FROM singer');
  assert.deepEqual(two.problems, [
    '3 characters outside <think> and <sql> (the format allows none)',
    '2 <sql> blocks; the last one is used',
  ]);
});

test('App. G case study: the three rounds and the oracle feedback between them', () => {
  const text = fixture('progress', 'g-case-study.txt');
  const sqls = [...text.matchAll(/Predicted SQL: (.*)$/gm)].map((m) => m[1]);
  const cots = [...text.matchAll(/Chain-of-Thought \(Extracted\): (.*?) \[snip\]/g)].map((m) => m[1]);
  const feedback = [...text.matchAll(/ODT Feedback (Feedback: .*)$/gm)].map((m) => m[1]);
  assert.equal(sqls.length, 3);
  assert.equal(cots.length, 3);
  assert.equal(feedback.length, 2);
  // The paper prints the extracted parts, not the raw turn: as raw text it has no <sql>.
  const s = session(progressProtocol, {}, { gold: sqls[2] }, (pred, t) => {
    const i = sqls.indexOf(pred);
    return pred === t.gold ? null : (feedback[i] ?? 'generic');
  });
  const raw = s.parse(text.split('\n').find((l) => l.startsWith('Model Output')) ?? '');
  assert.equal(raw.kind, 'invalid');
  const turns = sqls.map((sql, i) => s.parse(`<think>${cots[i]}</think> <sql>${sql}</sql>`));
  turns.forEach((a, i) => {
    assert.equal(a.sql, sqls[i]);
    assert.deepEqual(a.problems, []);
  });
  const r1 = s.respond(turns[0], null, 3);
  assert.equal(r1.observations[0].content, feedback[0]);
  assert.match(
    feedback[0],
    new RegExp(
      /^Feedback: your previous SQL has structural issues: JOIN_KEY_MISMATCH, FROM_OR_JOIN_TABLE_MI/.source +
        /SMATCH, SELECT_ERROR, GROUP_BY_ERROR\./.source,
    ),
  );
  assert.equal(s.respond(turns[1], null, 2).observations[0].content, feedback[1]);
  // Labels depend on what came before: parsed again after two rounds of feedback, round 3 is a self-correction.
  assert.deepEqual(turns[2].mdp, ['PROPOSE', 'EXECUTE']);
  const third = s.parse(`<think>${cots[2]}</think> <sql>${sqls[2]}</sql>`);
  assert.deepEqual(third.mdp, ['SELF-CORRECT', 'EXECUTE']);
  assert.equal(s.respond(third, null, 1).finalSql, sqls[2]);
});
