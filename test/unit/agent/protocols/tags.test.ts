// Tag helpers: every shape of tagged model text yields blocks with positions and flags, never an exception.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  findBlocks,
  firstBlock,
  lastBlock,
  stripCodeFence,
  removeBlocks,
  cutAfterClose,
  countTags,
  hasOpenTag,
  excerpt,
} from '../../../../src/core/agent/protocols/tags';
import { getProtocol, PROTOCOL_NAMES } from '../../../../src/core/agent/protocols';

test('findBlocks returns every block with positions', () => {
  const t = 'a<sql>one</sql>b<sql> two </sql>';
  const bs = findBlocks(t, 'sql');
  assert.equal(bs.length, 2);
  assert.deepEqual(
    bs.map((b) => b.inner),
    ['one', ' two '],
  );
  assert.equal(t.slice(bs[0].start, bs[0].end), '<sql>one</sql>');
  assert.equal(t.slice(bs[1].innerStart, bs[1].innerStart + 5), ' two ');
  assert.ok(bs.every((b) => !b.unclosed && !b.nested));
  assert.equal(firstBlock(t, 'sql')?.inner, 'one');
  assert.equal(lastBlock(t, 'sql')?.inner, ' two ');
});

test('an unclosed final tag runs to the end of the text', () => {
  const bs = findBlocks('<sql>a</sql> <sql>SELECT 1', 'sql');
  assert.equal(bs.length, 2);
  assert.equal(bs[1].inner, 'SELECT 1');
  assert.equal(bs[1].unclosed, true);
  assert.equal(bs[0].unclosed, false);
});

test('nesting is detected and the outer block balances', () => {
  const bs = findBlocks('<sql>x <sql>y</sql> z</sql>', 'sql');
  assert.equal(bs.length, 1);
  assert.equal(bs[0].nested, true);
  assert.equal(bs[0].inner, 'x <sql>y</sql> z');
  const open = findBlocks('<sql><sql>SELECT 1</sql>', 'sql');
  assert.equal(open.length, 1);
  assert.equal(open[0].nested, true);
  assert.equal(open[0].unclosed, true);
});

test('tags are case-insensitive, tolerate spaces and attributes; stray closes are ignored', () => {
  const bs = findBlocks('</sql> <SQL >a</ sql> <sql id="1">b</SQL>', 'sql');
  assert.deepEqual(
    bs.map((b) => b.inner),
    ['a', 'b'],
  );
  assert.deepEqual(countTags('</sql><sql>', 'sql'), { open: 1, close: 1 });
  assert.equal(hasOpenTag('x <sqlite>', 'sql'), false);
  assert.equal(hasOpenTag('x <sql>', 'sql'), true);
});

test('tag names are taken literally (no regex injection)', () => {
  assert.deepEqual(
    findBlocks('<a.b>x</a.b><aXb>y</aXb>', 'a.b').map((b) => b.inner),
    ['x'],
  );
  assert.deepEqual(
    findBlocks('<tool_call>{}</tool_call>', 'tool_call').map((b) => b.inner),
    ['{}'],
  );
});

test('empty and non-string input gives no blocks', () => {
  assert.deepEqual(findBlocks('', 'sql'), []);
  assert.deepEqual(findBlocks(undefined as unknown as string, 'sql'), []);
});

test('stripCodeFence removes a fence with or without language, closed or not', () => {
  assert.deepEqual(stripCodeFence('\n```sql\nSELECT 1\n```\n'), { text: 'SELECT 1', fenced: true, lang: 'sql' });
  assert.deepEqual(stripCodeFence('```\nSELECT 2\n```'), { text: 'SELECT 2', fenced: true, lang: '' });
  assert.deepEqual(stripCodeFence('```SQL SELECT 3'), { text: 'SELECT 3', fenced: true, lang: 'sql' });
  assert.deepEqual(stripCodeFence('```json\n{"a":1}'), { text: '{"a":1}', fenced: true, lang: 'json' });
  assert.deepEqual(stripCodeFence('  SELECT 4 '), { text: 'SELECT 4', fenced: false, lang: '' });
  assert.equal(stripCodeFence('Here:\n```sql\nSELECT 5\n``` and ```sql\nSELECT 6\n```').text, 'SELECT 5');
});

test('removeBlocks and cutAfterClose', () => {
  assert.equal(removeBlocks('a<think>t</think>b<sql>s</sql>c', ['think', 'sql']), 'abc');
  assert.deepEqual(cutAfterClose('<sql>s</sql> junk <sql>t</sql>', ['sql', 'solution']), {
    text: '<sql>s</sql>',
    dropped: ' junk <sql>t</sql>',
  });
  assert.deepEqual(cutAfterClose('<sql>open', ['sql']), { text: '<sql>open', dropped: '' });
  assert.equal(excerpt('a\n\n b', 10), 'a b');
  assert.equal(excerpt('x'.repeat(100), 10).length, 10);
});

test('large input with many tags stays linear enough and exact', () => {
  const t = '<sql>1</sql>'.repeat(5000) + '<sql>';
  const bs = findBlocks(t, 'sql');
  assert.equal(bs.length, 5001);
  assert.equal(bs[5000].unclosed, true);
});

test('getProtocol rejects unknown names, listing the valid ones', () => {
  assert.throws(
    () => getProtocol('nope'),
    /unknown protocol 'nope'; valid protocols: skyrl, sqltrail, mtir, mtsqlr1, progress/,
  );
  assert.deepEqual([...PROTOCOL_NAMES], ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress']);
});

test('a fence with the body on the same line keeps the body', () => {
  assert.deepEqual(stripCodeFence('```SELECT 1```'), { text: 'SELECT 1', fenced: true, lang: '' });
  assert.deepEqual(stripCodeFence('```json {"a": 1}```'), { text: '{"a": 1}', fenced: true, lang: 'json' });
});

test('every protocol name resolves to the module of that name', () => {
  for (const name of PROTOCOL_NAMES) {
    const p = getProtocol(name);
    assert.equal(p.name, name);
    assert.ok(Number.isInteger(p.defaults.maxTurns) && p.defaults.maxTurns >= 1);
  }
});
