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
    { type: 'grid', seq: 3, id: 't', message: { type: 'page', offset: 1000, limit: 200, filters: [] } },
    {
      type: 'grid',
      seq: 3,
      id: 't',
      message: {
        type: 'page',
        offset: 0,
        limit: 200,
        sortColumn: 1,
        descending: true,
        filters: [{ column: 0, text: '>5' }],
      },
    },
    { type: 'grid', seq: 3, id: 't', message: { type: 'export', format: 'csv' } },
    { type: 'grid', seq: 3, id: 't', message: { type: 'cancelExport' } },
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
  // The run's grid: the inner message is held to the paged grid's own rules.
  const grid = (message: unknown) => problem({ type: 'grid', seq: 1, id: 't', message });
  assert.match(grid({ type: 'page', offset: 0, limit: 5000, filters: [] })!, /^grid: page: limit must be 1–1000/);
  assert.match(grid({ type: 'page', offset: -200, limit: 200, filters: [] })!, /^grid: page: offset must be/);
  assert.match(grid({ type: 'page', offset: 0, limit: 200 })!, /^grid: page: missing filters/);
  assert.match(grid({ type: 'page', offset: 0, limit: 200, filters: [{ column: 'a' }] })!, /column index and a text/);
  assert.match(grid({ type: 'export', format: 'xlsx' })!, /unknown format "xlsx"/);
  assert.match(grid({ type: 'run', seq: 1, id: 't', sql: 'SELECT 1' })!, /^grid: unknown message type "run"/);
  assert.match(problem({ type: 'grid', seq: 1, id: 't', message: [] })!, /message should be object, is array/);
  assert.match(problem({ type: 'eval', code: '1' })!, /unknown message type "eval"/);
  assert.match(problem(['save'])!, /not an object/);
});
