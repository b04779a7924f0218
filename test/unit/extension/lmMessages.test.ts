// vscode.lm has no system or tool role: the system prompt joins the first user message, observations become user
// messages, and neighbours with the same role merge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldForLanguageModel } from '../../../src/extension/models/lmMessages';

test('the system prompt is folded into the first user message', () => {
  assert.deepEqual(
    foldForLanguageModel([
      { role: 'system', content: 'You are a SQL expert.' },
      { role: 'user', content: 'How many authors?' },
    ]),
    [{ role: 'user', content: 'You are a SQL expert.\n\nHow many authors?' }],
  );
});

test(
  'a multi-turn episode keeps its order; tool observations ' + 'become user turns and merge with a following user turn',
  () => {
    const out = foldForLanguageModel([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Q' },
      { role: 'assistant', content: '<sql>SELECT 1</sql>' },
      { role: 'tool', content: '<observation>1</observation>' },
      { role: 'user', content: 'continue' },
      { role: 'assistant', content: '<solution>SELECT 1</solution>' },
    ]);
    assert.deepEqual(out, [
      { role: 'user', content: 'S\n\nQ' },
      { role: 'assistant', content: '<sql>SELECT 1</sql>' },
      { role: 'user', content: '<observation>1</observation>\n\ncontinue' },
      { role: 'assistant', content: '<solution>SELECT 1</solution>' },
    ]);
  },
);

test('a conversation that opens with the assistant gets the system prompt as its own first user turn', () => {
  assert.deepEqual(
    foldForLanguageModel([
      { role: 'system', content: 'S' },
      { role: 'assistant', content: 'A' },
    ]),
    [
      { role: 'user', content: 'S' },
      { role: 'assistant', content: 'A' },
    ],
  );
  assert.deepEqual(
    foldForLanguageModel([
      { role: 'system', content: 'S1' },
      { role: 'system', content: 'S2' },
    ]),
    [{ role: 'user', content: 'S1\n\nS2' }],
  );
  assert.deepEqual(foldForLanguageModel([]), []);
});
