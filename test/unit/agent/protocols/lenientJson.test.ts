// The lenient JSON reader: strict JSON unchanged, each common model mistake accepted and named, junk rejected
// with a reason, never an exception.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLenientJson } from '../../../../src/core/agent/protocols/lenientJson';

test('strict JSON passes with no tolerances', () => {
  assert.deepEqual(parseLenientJson(' {"a": [1, 2.5, "x\\n"], "b": null} '), {
    value: { a: [1, 2.5, 'x\n'], b: null },
    tolerated: [],
    error: null,
  });
});

test('each tolerance is named', () => {
  const cases: [string, unknown, string[]][] = [
    ["{'a': 'b'}", { a: 'b' }, ['single-quoted string']],
    ['{"a": 1,}', { a: 1 }, ['trailing comma']],
    ['[1, 2,]', [1, 2], ['trailing comma']],
    ['{a: 1}', { a: 1 }, ['unquoted key']],
    ['{"a": True, "b": None}', { a: true, b: null }, ['Python literal']],
    ['{"sql": "SELECT *\nFROM t"}', { sql: 'SELECT *\nFROM t' }, ['raw control character in string']],
    ['{"a": 1', { a: 1 }, ['unclosed object']],
    ['call: {"a": 1} done', { a: 1 }, ['text before the JSON', 'text after the JSON']],
    ['{"a": 1 /* c */}', { a: 1 }, ['comment']],
    [
      "{'sql': 'SELECT * FROM t WHERE n = 'x''}",
      { sql: "SELECT * FROM t WHERE n = 'x'" },
      ['single-quoted string', "unescaped ' inside a string"],
    ],
    ['{"sql": "SELECT "name" FROM t"}', { sql: 'SELECT "name" FROM t' }, ['unescaped " inside a string']],
    ['{"a": 1, "a": 2}', { a: 2 }, []],
  ];
  for (const [text, value, tolerated] of cases) {
    const r = parseLenientJson(text);
    assert.deepEqual(r.value, value, text);
    assert.deepEqual(r.tolerated, tolerated, text);
  }
});

test('unreadable input gives an error, not an exception', () => {
  assert.equal(parseLenientJson('').error, 'empty text');
  assert.equal(parseLenientJson('no json here').error, 'no JSON object found');
  const bad = parseLenientJson('{"a" 1}');
  assert.equal(bad.value, undefined);
  assert.match(bad.error ?? '', /expected ":" at character/);
  assert.equal(parseLenientJson(undefined as unknown as string).error, 'empty text');
  const deep = parseLenientJson('['.repeat(1000));
  assert.match(deep.error ?? '', /nesting too deep/);
});

test('eval-looking input is only ever data', () => {
  const r = parseLenientJson('{"a": process.exit(1)}');
  assert.equal(r.value, undefined);
  assert.match(r.error ?? '', /unexpected/);
});
