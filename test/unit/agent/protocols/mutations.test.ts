// Property-style: random damage to every quoted fixture (truncation, duplicated tags, junk, random bytes) never makes
// parse() throw and always yields a well-formed ParsedAction. Seeded, so a failure reproduces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getProtocol } from '../../../../src/core/agent/protocols';
import type { ParsedAction, ProtocolName } from '../../../../src/core/agent/types';
import { fixture, fixtureNames, session } from './helpers';
import { mulberry32 } from '../../../../src/core/util/random';

const TAGS = [
  '<sql>',
  '</sql>',
  '<think>',
  '</think>',
  '<solution>',
  '</solution>',
  '<reasoning>',
  '</reasoning>',
  '<tool_call>',
  '</tool_call>',
  '<answer>',
  '</answer>',
  '<tool_response>',
  '```sql\n',
  '```',
  '{',
  '}',
  '"',
  "'",
  ',',
];

function mutate(text: string, r: () => number): string {
  const at = () => Math.floor(r() * (text.length + 1));
  switch (Math.floor(r() * 7)) {
    case 0:
      return text.slice(0, at());
    case 1: {
      const i = at();
      return text.slice(0, i) + TAGS[Math.floor(r() * TAGS.length)] + text.slice(i);
    }
    case 2: {
      const i = at();
      const j = Math.min(text.length, i + Math.floor(r() * 200));
      return text.slice(0, j) + text.slice(i, j) + text.slice(j);
    }
    case 3: {
      const i = at();
      return text.slice(0, i) + text.slice(i + Math.floor(r() * 50));
    }
    case 4: {
      const bytes = Array.from({ length: 1 + Math.floor(r() * 40) }, () =>
        String.fromCharCode(Math.floor(r() * 0xffff)),
      );
      const i = at();
      return text.slice(0, i) + bytes.join('') + text.slice(i);
    }
    case 5:
      return text.split('').reverse().join('');
    default: {
      const i = at();
      return text.slice(0, i) + '<sql>' + text.slice(i) + '<sql><think>';
    }
  }
}

function wellFormed(a: ParsedAction): void {
  assert.ok(['execute', 'memory', 'answer', 'invalid'].includes(a.kind));
  assert.ok(Array.isArray(a.problems) && a.problems.every((p) => typeof p === 'string' && p.length > 0));
  assert.ok(Array.isArray(a.mdp));
  assert.ok(a.thought === null || typeof a.thought === 'string');
  if (a.kind === 'invalid') {
    assert.equal(a.sql, null);
    assert.ok(a.problems.length > 0, 'an invalid action says why');
  } else {
    assert.ok(typeof a.sql === 'string' && a.sql.trim() !== '');
  }
}

const protocols: ProtocolName[] = ['skyrl', 'sqltrail', 'mtir', 'progress'];
const sources = ['skyrl', 'sqltrail', 'mtir', 'progress'].flatMap((dir) =>
  fixtureNames(dir).map((f) => fixture(dir, f)),
);

test('fixtures exist for every protocol directory', () => {
  assert.ok(sources.length >= 10);
});

for (const name of protocols) {
  test(`${name}: 3000 random mutations of the fixtures never throw and stay well formed`, () => {
    const r = mulberry32(0x5eed + name.length);
    const s = session(getProtocol(name), {}, { gold: 'SELECT 1' }, () => 'SELECT_ERROR, differs.');
    for (let i = 0; i < 3000; i++) {
      let text = sources[i % sources.length];
      const rounds = 1 + Math.floor(r() * 3);
      for (let k = 0; k < rounds; k++) text = mutate(text, r);
      let a: ParsedAction;
      try {
        a = s.parse(text);
      } catch (err) {
        assert.fail(`parse threw on mutation ${i}: ${(err as Error).message}\n${JSON.stringify(text.slice(0, 300))}`);
      }
      wellFormed(a);
      // respond must accept whatever parse produced, too.
      const res = s.respond(a, null, 1);
      assert.ok(Array.isArray(res.observations));
      assert.equal(typeof s.restoreStop(text, null, 'stop'), 'string');
    }
  });
}
