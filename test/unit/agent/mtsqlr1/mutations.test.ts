// Property-style: seeded random damage to every App. D turn, parsed from every state, never throws and always gives a
// well-formed ParsedAction that respond() can take. A failure prints its seed, so it reproduces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { parseTurn, type TurnState } from '../../../../src/core/agent/protocols/mtsqlr1';
import type { MdpAction, ParsedAction } from '../../../../src/core/agent/types';
import { d1Session, errResult, okResult, outputs, turnText } from './support';
import { mulberry32 } from '../../../../src/core/util/random';

const PIECES = [
  '<tool_call>',
  '</tool_call>',
  '<answer_sql>',
  '</answer_sql>',
  '<think>',
  '</think>',
  '<exec_verify>pass</exec_verify>',
  '<exec_verify>',
  '</exec_verify>',
  '<memory_verify>no_pass</memory_verify>',
  '<memory_verify>',
  '<tool_response>',
  '```sql\n',
  '```',
  '{',
  '}',
  '"',
  "'",
  ',',
  ':',
  '\\',
  '"code"',
  '"name": "memory_retrieve"',
  '<answer\\_sql>',
  '\u0000',
  '\u{1F600}',
];

function mutate(text: string, r: () => number): string {
  const at = () => Math.floor(r() * (text.length + 1));
  switch (Math.floor(r() * 7)) {
    case 0:
      return text.slice(0, at());
    case 1: {
      const i = at();
      return text.slice(0, i) + PIECES[Math.floor(r() * PIECES.length)] + text.slice(i);
    }
    case 2: {
      const i = at();
      const j = Math.min(text.length, i + Math.floor(r() * 300));
      return text.slice(0, j) + text.slice(i, j) + text.slice(j);
    }
    case 3: {
      const i = at();
      return text.slice(0, i) + text.slice(i + Math.floor(r() * 80));
    }
    case 4: {
      const i = at();
      return text.slice(0, i) + String.fromCharCode(Math.floor(r() * 0x3000)) + text.slice(i + 1);
    }
    case 5: {
      const i = at();
      const j = at();
      return text.slice(Math.min(i, j), Math.max(i, j));
    }
    default:
      return text.replace(/[<>]/g, (c) => (r() < 0.2 ? '' : c));
  }
}

const LABELS = new Set<MdpAction>(['PROPOSE', 'EXECUTE', 'E-VERIFY', 'M-VERIFY', 'SELF-CORRECT', 'FINALIZE']);
const STATES: TurnState[] = [
  { phase: 'start', candidate: null, executedAny: false, memoryAny: false, hasHistory: true },
  { phase: 'executed', candidate: 'SELECT 1', executedAny: true, memoryAny: false, hasHistory: true },
  { phase: 'memory', candidate: 'SELECT 1', executedAny: true, memoryAny: true, hasHistory: false },
];

function checkWellFormed(a: ParsedAction, where: string): void {
  assert.ok(['execute', 'memory', 'answer', 'invalid'].includes(a.kind), where);
  if (a.kind === 'invalid') assert.equal(a.sql, null, where);
  else assert.ok(typeof a.sql === 'string' && a.sql.trim() !== '', where);
  assert.ok(a.thought === null || typeof a.thought === 'string', where);
  assert.ok(Array.isArray(a.mdp) && a.mdp.every((m) => LABELS.has(m)), where);
  if (a.kind === 'execute') assert.equal(a.mdp[a.mdp.length - 1], 'EXECUTE', where);
  if (a.kind === 'memory') assert.equal(a.mdp[a.mdp.length - 1], 'M-VERIFY', where);
  if (a.kind === 'answer') assert.equal(a.mdp[a.mdp.length - 1], 'FINALIZE', where);
  assert.ok(Array.isArray(a.problems) && a.problems.every((x) => typeof x === 'string' && x.length > 0), where);
  for (const v of [a.verify?.exec, a.verify?.memory])
    assert.ok(v === undefined || v === 'pass' || v === 'no_pass', where);
}

test('random mutations of the App. D turns: never throw, always a well-formed action that respond() accepts', () => {
  const files = readdirSync(outputs).filter((f) => f.endsWith('.txt'));
  assert.ok(files.length >= 8);
  let parsed = 0;
  const kinds = new Set<string>();
  for (const file of files) {
    const original = turnText(file);
    for (let seed = 1; seed <= 150; seed++) {
      const r = mulberry32(seed * 7919 + file.length);
      let text = original;
      const rounds = 1 + Math.floor(r() * 4);
      for (let k = 0; k < rounds; k++) text = mutate(text, r);
      for (const state of STATES) {
        const where = `${file} seed ${seed} phase ${state.phase}`;
        const a = parseTurn(text, state);
        checkWellFormed(a, where);
        kinds.add(a.kind);
        parsed++;
      }
      // The session end to end, with a result of either kind, so respond() is exercised on damaged actions too.
      const s = d1Session();
      const a = s.parse(text);
      const res = s.respond(
        a,
        a.kind === 'execute' ? (seed % 2 ? okResult(['x'], [[seed]]) : errResult('no such column: x')) : null,
        seed % 3,
      );
      assert.ok(Array.isArray(res.observations), `${file} seed ${seed}`);
      assert.equal(res.done, a.kind === 'answer' || seed % 3 === 0, `${file} seed ${seed}`);
    }
  }
  assert.ok(parsed >= 3600);
  assert.deepEqual([...kinds].sort(), ['answer', 'execute', 'invalid', 'memory'], 'the mutations reach every kind');
});
