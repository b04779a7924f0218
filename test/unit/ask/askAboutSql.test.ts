// "Ask about This SQL": the agent gets the question and the SQL as one text, and the card splits them back, so its
// title is the question alone and the SQL is shown apart (not run together with the question).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { questionWithSql, splitQuestion } from '../../../src/protocol/askAboutSql';

test('the card title is the question, the SQL comes back apart', () => {
  const sql = 'SELECT name\nFROM doctor\nWHERE id = 3;';
  const asked = questionWithSql('  Why does this return no rows? ', sql);
  assert.match(asked, /^Why does this return no rows\?\n\nThe SQL in question:\nSELECT name/);
  assert.deepEqual(splitQuestion(asked), { title: 'Why does this return no rows?', sql });
});

test('a plain question has no SQL part, even when it mentions SQL', () => {
  assert.deepEqual(splitQuestion('Which SQL in question finds doctors?'), {
    title: 'Which SQL in question finds doctors?',
    sql: null,
  });
});
