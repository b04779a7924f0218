// Format rules on the papers' own example traces (test/fixtures/model-outputs), split into assistant turns at the
// environment's <observation> blocks, and on hand-made breakages of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkFormat, reopenTemplateTag, tagBlocks } from '../../../src/core/rewards/format';
import { fixturesDir } from '../../helpers/fixtures';
import { trajectory, type TurnSpec } from './fixtures';
import type { ProtocolName } from '../../../src/core/agent/types';

const read = (p: string) => readFileSync(join(fixturesDir, 'model-outputs', p), 'utf8');

/** Assistant turns of a transcript: the text between <observation> blocks (the environment's messages). */
function turnsOf(transcript: string): TurnSpec[] {
  const parts = transcript
    .split(/<observation>[\s\S]*?<\/observation>/)
    .map((s) => s.trim())
    .filter(Boolean);
  return parts.map((assistant, i) => ({
    assistant,
    kind: i === parts.length - 1 ? 'answer' : 'execute',
    sql: 'SELECT 1',
  }));
}

function episode(protocol: ProtocolName, turns: TurnSpec[], end: 'answer' | 'budget' = 'answer') {
  return trajectory({ protocol, turns, finalSql: 'SELECT 1', end });
}

test('SkyRL-SQL App. A example (schema preamble dropped) is well-formed; breaking it fails with the kind', () => {
  const text = read('skyrl/appA-example.txt').replace(/^[\s\S]*?(?=<think>)/, '');
  const turns = turnsOf(text);
  assert.equal(turns.length, 2);
  assert.deepEqual(checkFormat(episode('skyrl', turns)), {
    ok: true,
    explanation: '2 turn(s) with <think> and <sql> blocks, ending in one <solution>',
  });
  const noThink = turns.map((t) => ({ ...t, assistant: t.assistant.replace(/<think>[\s\S]*?<\/think>/, '') }));
  assert.equal(checkFormat(episode('skyrl', noThink)).kind, 'missing-think');
  const cut = [turns[0]];
  assert.equal(checkFormat(episode('skyrl', cut, 'budget')).kind, 'missing-solution');
});

test('SQL-Trail App. A.8 example: final output has <think> and <solution>; <reasoning> works too', () => {
  const turns = turnsOf(read('sqltrail/a8-example.txt'));
  assert.equal(turns.length, 2);
  assert.equal(checkFormat(episode('sqltrail', turns)).ok, true);
  const reasoning = turns.map((t) => ({ ...t, assistant: t.assistant.replace(/<(\/?)think>/g, '<$1reasoning>') }));
  assert.equal(checkFormat(episode('sqltrail', reasoning)).ok, true);
  const two = [turns[0], { ...turns[1], assistant: turns[1].assistant + '<solution>SELECT 2</solution>' }];
  assert.equal(checkFormat(episode('sqltrail', two)).kind, 'multiple-solution');
});

test('MTIR-SQL: <think> + <tool_call> turns, then <think> + <answer>', () => {
  const call = read('mtir/constructed-call.txt').trim(),
    answer = read('mtir/constructed-answer.txt').trim();
  assert.equal(checkFormat(episode('mtir', [{ assistant: call }, { assistant: answer, kind: 'answer' }])).ok, true);
  assert.equal(
    checkFormat(
      episode('mtir', [
        { assistant: answer, kind: 'answer' },
        { assistant: answer, kind: 'answer' },
      ]),
    ).kind,
    'answer-before-end',
  );
  assert.equal(
    checkFormat(episode('mtir', [{ assistant: call }, { assistant: `${answer}\nthanks!`, kind: 'answer' }])).kind,
    'text-after-answer',
  );
  assert.equal(
    checkFormat(episode('mtir', [{ assistant: `Let me think.${call}` }, { assistant: answer, kind: 'answer' }])).kind,
    'missing-think',
  );
});

test('a turn that starts inside a template-opened <think> (Qwen3) is not a format failure', () => {
  const answer = read('mtir/constructed-answer.txt')
    .trim()
    .replace(/^<think>/, '');
  assert.equal(reopenTemplateTag(answer, 'think').startsWith('<think>'), true);
  assert.equal(checkFormat(episode('mtir', [{ assistant: answer, kind: 'answer' }])).ok, true);
  assert.equal(reopenTemplateTag('<think>a</think>', 'think'), '<think>a</think>');
  assert.equal(reopenTemplateTag('no tags', 'think'), 'no tags');
});

test('generic rule for other protocols: ended with an answer, no invalid action', () => {
  assert.equal(checkFormat(episode('mtsqlr1', [{ assistant: 'x', kind: 'answer' }])).ok, true);
  const bad = trajectory({
    protocol: 'mtsqlr1',
    finalSql: null,
    end: 'budget',
    turns: [{ assistant: 'x', kind: 'invalid' }],
  });
  assert.equal(checkFormat(bad).kind, 'invalid-action');
  assert.equal(checkFormat(null).ok, true, 'a bare SQL has no format');
});

test('tagBlocks finds complete blocks and tells unbalanced tags', () => {
  assert.deepEqual(tagBlocks('<a>1</a> <a>2</a>', 'a'), { blocks: ['1', '2'], balanced: true });
  assert.equal(tagBlocks('<a>1</a> <a>2', 'a').balanced, false);
  assert.equal(tagBlocks('1</a>', 'a').balanced, false);
});
