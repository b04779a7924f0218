// scripts/tiny-model/transit.ts's flawed teacher (`npm run train:demo`'s SFT conversations): on the real transit
// sample, each mixed-up answer is a real mistake (it runs, and its result differs from the gold one), exactly one of a
// question's three SFT conversations is right, the right one is not always the same wording, and no GRPO prompt or
// held-back question carries the teacher's answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { repoRoot } from '../../helpers/fixtures';
import { transitQuestions, type TransitQA } from '../../../scripts/tiny-model/transit';

function withTransit<T>(fn: (db: Database.Database) => T): T {
  const db = new Database(join(repoRoot, 'media', 'samples', 'transit.sqlite'), { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The rows of a statement, as one comparable string (order kept: the gold queries have no ORDER BY to disagree on). */
function rows(db: Database.Database, sql: string): string {
  return JSON.stringify(db.prepare(sql).raw().all());
}

test('every mixed-up answer runs and returns something other than the gold answer', () => {
  withTransit((db) => {
    const mixed = transitQuestions(db).filter((q) => q.teacher);
    assert.ok(mixed.length > 0);
    for (const q of mixed) assert.notEqual(rows(db, q.teacher!.sql), rows(db, q.sql), q.question);
  });
});

test("one of each question value's three SFT conversations is right; which one turns with the value", () => {
  const questions = withTransit((db) => transitQuestions(db));
  const byValue = new Map<string, TransitQA[]>();
  for (const q of questions.filter((x) => x.role === 'sft')) {
    const key = `${q.template}|${q.sql}`;
    byValue.set(key, [...(byValue.get(key) ?? []), q]);
  }
  const rightAt = new Map<string, Set<number>>();
  for (const [key, qs] of byValue) {
    assert.equal(qs.length, 3, key);
    const template = key.split('|')[0];
    const right = qs.flatMap((q, i) => (q.teacher ? [] : [i]));
    // `count` has no column to mix up: all three right.
    if (template === 'count') assert.deepEqual(right, [0, 1, 2]);
    else {
      assert.equal(right.length, 1, `${key}: ${right.length} right`);
      rightAt.set(template, (rightAt.get(template) ?? new Set()).add(right[0]));
    }
  }
  assert.equal(rightAt.size, 5);
  for (const [template, at] of rightAt) assert.ok(at.size >= 2, `${template}: always the same wording is right`);
});

test('GRPO prompts and held-back questions keep the gold SQL only', () => {
  const questions = withTransit((db) => transitQuestions(db));
  const rest = questions.filter((q) => q.role !== 'sft');
  assert.equal(rest.length, 52);
  assert.ok(rest.every((q) => q.teacher === undefined));
  assert.equal(rest.filter((q) => q.heldout).length, 26);
});
