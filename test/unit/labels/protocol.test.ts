// The labeling panel's message rules: field types by checkMessage, values and sizes by labelMessageProblem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkMessage } from '../../../src/protocol/validate';
import { LABEL_RULES, LIMITS, labelMessageProblem, type ToHost } from '../../../src/protocol/labeling';

function problem(raw: unknown): string | null {
  const c = checkMessage<ToHost>(raw, LABEL_RULES);
  return c.ok ? labelMessageProblem(c.message) : c.error;
}

test('label protocol: well-formed messages pass', () => {
  for (const m of [
    { type: 'ready' },
    { type: 'ready', position: 3, id: 'x' },
    { type: 'go', position: 0 },
    { type: 'setFilter', filter: 'unsure' },
    { type: 'save', seq: 1, id: 't', verdict: '', correctedSql: '', tags: [], note: '' },
    {
      type: 'save',
      seq: 2,
      id: 't',
      verdict: 'unsure',
      correctedSql: 'SELECT 1',
      tags: ['loop', 'my own tag'],
      note: 'n',
    },
    { type: 'run', seq: 3, id: 't', sql: 'SELECT 1' },
    { type: 'addTag', name: 'new one' },
    { type: 'openReplay', id: 't' },
    { type: 'exportSft' },
    { type: 'exportRl' },
  ])
    assert.equal(problem(m), null, JSON.stringify(m));
});

test('label protocol: wrong types, values and sizes are refused with what is wrong', () => {
  assert.match(
    problem({ type: 'save', seq: 1, id: 't', verdict: null, correctedSql: '', tags: [], note: '' })!,
    /verdict should be string, is null/,
  );
  assert.match(
    problem({ type: 'save', seq: 1, id: 't', verdict: 'yes', correctedSql: '', tags: [], note: '' })!,
    /unknown verdict "yes"/,
  );
  assert.match(
    problem({ type: 'save', seq: 1, id: '', verdict: 'correct', correctedSql: '', tags: [], note: '' })!,
    /empty trajectory id/,
  );
  assert.match(
    problem({
      type: 'save',
      seq: 1,
      id: 't',
      verdict: 'correct',
      correctedSql: 'x'.repeat(LIMITS.sqlChars + 1),
      tags: [],
      note: '',
    })!,
    /corrected SQL longer/,
  );
  assert.match(
    problem({ type: 'save', seq: 1, id: 't', verdict: 'correct', correctedSql: '', tags: ['ok', ''], note: '' })!,
    /every tag/,
  );
  assert.match(
    problem({
      type: 'save',
      seq: 1,
      id: 't',
      verdict: 'correct',
      correctedSql: '',
      tags: Array(LIMITS.tags + 1).fill('a'),
      note: '',
    })!,
    /more than 50 tags/,
  );
  assert.match(problem({ type: 'go', position: -2 })!, /whole number/);
  assert.match(problem({ type: 'go', position: Infinity })!, /position should be number/);
  assert.match(problem({ type: 'setFilter', filter: 'newest' })!, /unknown filter "newest"/);
  assert.match(problem({ type: 'run', seq: 1, id: 't', sql: '  \n' })!, /no SQL to run/);
  assert.match(problem({ type: 'addTag', name: 'x'.repeat(41) })!, /1–40 characters/);
  assert.match(problem({ type: 'eval', code: '1' })!, /unknown message type "eval"/);
  assert.match(problem(['save'])!, /not an object/);
});
