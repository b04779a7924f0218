// The label store on real SQLite files: WAL, schema version, tags, a SIGKILLed writer, two connections and locks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { tempDir } from '../../helpers/fixtures';
import { LabelStore, LabelStoreError, LABEL_SCHEMA_VERSION } from '../../../src/core/labels/store';
import { quarryPath } from '../../../src/core/workspace/quarryLayout';
import { BUILTIN_TAGS, type LabelInput } from '../../../src/core/labels/types';
import { orderQueue } from '../../../src/core/labels/queue';

const input = (over: Partial<LabelInput> = {}): LabelInput => ({
  trajectoryId: 't1',
  file: '/w/.quarry/trajectories.jsonl',
  recordSha: 'abc',
  verdict: 'incorrect',
  correctedSql: 'SELECT name FROM author',
  tags: ['wrong join'],
  note: 'joined the wrong table',
  labeler: 'ana',
  ...over,
});

test('store: a new store is WAL with the schema version and the built-in tags; saves reach the WAL file', () => {
  const path = quarryPath(tempDir(), 'labels');
  const store = LabelStore.open(path);
  store.save(input());
  const raw = new Database(path, { readonly: true });
  try {
    assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(raw.pragma('user_version', { simple: true }), LABEL_SCHEMA_VERSION);
    assert.deepEqual(
      raw.prepare('SELECT name FROM tags WHERE builtin = 1 ORDER BY name').pluck().all(),
      [...BUILTIN_TAGS].sort(),
    );
  } finally {
    raw.close();
  }
  assert.ok(existsSync(path + '-wal'), 'the WAL file exists while the store is open');
  assert.deepEqual(
    store.tags().map((t) => t.name),
    [...BUILTIN_TAGS],
  );
  store.close();
});

test('store: save, read back, replace; tags are normalised and unknown ones join the tags table', () => {
  const store = LabelStore.open(quarryPath(tempDir(), 'labels'));
  const saved = store.save(input({ tags: ['  Wrong   Join ', 'needs  review', 'wrong join'] }));
  assert.deepEqual(saved.tags, ['needs review', 'wrong join']);
  const got = store.get('t1');
  assert.ok(got);
  assert.equal(got.verdict, 'incorrect');
  assert.equal(got.correctedSql, 'SELECT name FROM author');
  assert.equal(got.note, 'joined the wrong table');
  assert.equal(got.labeler, 'ana');
  assert.equal(got.recordSha, 'abc');
  assert.deepEqual(got.tags, ['needs review', 'wrong join']);
  assert.ok(!Number.isNaN(Date.parse(got.updatedAt)));
  assert.deepEqual(
    store.tags().find((t) => t.name === 'needs review'),
    { name: 'needs review', builtin: false },
  );

  store.save(input({ verdict: 'correct', correctedSql: '   ', tags: ['format'], note: '' }));
  const again = store.get('t1')!;
  assert.equal(again.verdict, 'correct');
  assert.equal(again.correctedSql, null, 'a blank corrected SQL is stored as none');
  assert.deepEqual(again.tags, ['format']);
  assert.equal(store.all().length, 1);
  assert.deepEqual(store.counts(), { labeled: 1, byVerdict: { correct: 1, incorrect: 0, unsure: 0 } });
  assert.equal(store.get('nope'), null);
  assert.equal(store.delete('t1'), true);
  assert.equal(store.get('t1'), null);
  store.close();
});

test('store: reviewers extend the tags; built-ins stay first; bad tags and verdicts are refused clearly', () => {
  const store = LabelStore.open(quarryPath(tempDir(), 'labels'));
  assert.equal(store.addTag('  Off By One '), 'off by one');
  store.addTag('ambiguous question');
  store.addTag('off by one');
  const names = store.tags().map((t) => t.name);
  assert.deepEqual(names.slice(0, BUILTIN_TAGS.length), [...BUILTIN_TAGS]);
  assert.deepEqual(names.slice(BUILTIN_TAGS.length), ['ambiguous question', 'off by one']);
  assert.throws(
    () => store.addTag('   '),
    (e: unknown) => e instanceof LabelStoreError && e.kind === 'invalid' && /empty/.test(e.message),
  );
  assert.throws(() => store.addTag('x'.repeat(41)), /longer than 40/);
  assert.throws(() => store.save(input({ verdict: 'maybe' as never })), /unknown verdict "maybe"/);
  assert.throws(() => store.save(input({ trajectoryId: '' })), /needs a trajectory id/);
  store.close();
});

test('store: a writer SIGKILLed mid-stream loses no label whose save() had returned', async () => {
  const path = quarryPath(tempDir(), 'labels');
  const child = spawn(process.execPath, [join(__dirname, 'saveAndDie.js'), path], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const confirmed: string[] = [];
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.startsWith('saved ')) confirmed.push(line.slice(6));
      }
      if (confirmed.length >= 40 && !child.killed) child.kill('SIGKILL');
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve();
      else reject(new Error(`the child exited by itself (code ${code}): ${stderr}`));
    });
  });
  assert.ok(confirmed.length >= 40);
  const store = LabelStore.open(path);
  const labels = store.getMany(confirmed);
  for (const id of confirmed) {
    const i = Number(id.slice(1));
    const l = labels.get(id);
    assert.ok(l, `label ${id} was confirmed before the kill and must be there`);
    assert.equal(l.verdict, i % 2 === 0 ? 'correct' : 'incorrect');
    assert.equal(l.correctedSql, i % 3 === 0 ? `SELECT ${i}` : null);
    assert.deepEqual(l.tags, i % 2 === 0 ? ['loop'] : ['format', 'wrong join']);
    assert.equal(l.note, `note ${i}`);
  }
  // Whatever the kill interrupted is all there or not there at all: no label without its tags.
  for (const l of store.all()) assert.ok(l.tags.length > 0, `label ${l.trajectoryId} has its tags`);
  store.close();
});

test('store: two connections see each other’s saves; a held lock makes a save fail as busy, then it works', () => {
  const path = quarryPath(tempDir(), 'labels');
  const a = LabelStore.open(path, { busyTimeoutMs: 50 });
  const b = LabelStore.open(path, { busyTimeoutMs: 50 });
  a.save(input({ trajectoryId: 'from-a' }));
  b.save(input({ trajectoryId: 'from-b', tags: ['brand new tag'] }));
  assert.equal(b.get('from-a')?.verdict, 'incorrect');
  assert.deepEqual(a.get('from-b')?.tags, ['brand new tag']);
  assert.ok(a.tags().some((t) => t.name === 'brand new tag'));

  const other = new Database(path);
  other.pragma('busy_timeout = 0');
  other.exec('BEGIN IMMEDIATE');
  try {
    assert.throws(
      () => a.save(input({ trajectoryId: 'blocked' })),
      (e: unknown) =>
        e instanceof LabelStoreError &&
        e.kind === 'busy' &&
        e.message.includes('locked by another process') &&
        e.message.includes('50 ms'),
    );
    // Readers are not blocked by a writer in WAL mode.
    assert.equal(b.get('from-a')?.trajectoryId, 'from-a');
  } finally {
    other.exec('ROLLBACK');
    other.close();
  }
  a.save(input({ trajectoryId: 'blocked' }));
  assert.ok(b.get('blocked'));
  a.close();
  b.close();
});

test('store: a file that is not a label store, or a newer schema, is refused with what it is', () => {
  const dir = tempDir();
  const junk = join(dir, 'junk.sqlite');
  writeFileSync(junk, 'this is not sqlite at all, just some text long enough to have a header'.repeat(20));
  assert.throws(
    () => LabelStore.open(junk),
    (e: unknown) => e instanceof LabelStoreError && e.kind === 'not-a-store' && e.message.includes(junk),
  );

  const other = join(dir, 'other.sqlite');
  const db = new Database(other);
  db.exec('CREATE TABLE customers (id INTEGER)');
  db.close();
  assert.throws(() => LabelStore.open(other), /not a Quarry label store/);

  const newer = join(dir, 'newer.sqlite');
  LabelStore.open(newer).close();
  const n = new Database(newer);
  n.pragma('user_version = 99');
  n.close();
  assert.throws(
    () => LabelStore.open(newer),
    (e: unknown) => e instanceof LabelStoreError && e.kind === 'version' && /newer Quarry/.test(e.message),
  );
});

test('queue: unlabeled first in file order, then labeled; the filters keep what they say', () => {
  const ids = ['a', 'b', 'c', 'd', 'e'];
  const l = (id: string, verdict: 'correct' | 'incorrect' | 'unsure' | null) =>
    [id, { ...input({ trajectoryId: id, verdict }), labeler: 'x', updatedAt: '' }] as const;
  const labels = new Map([l('b', 'correct'), l('d', 'incorrect'), l('e', null), l('c', 'unsure')]);
  assert.deepEqual(
    orderQueue(ids, labels, 'unlabeled-first'),
    [0, 4, 1, 2, 3],
    'a label without a verdict is still unlabeled',
  );
  assert.deepEqual(orderQueue(ids, labels, 'unlabeled'), [0, 4]);
  assert.deepEqual(orderQueue(ids, labels, 'labeled'), [1, 2, 3]);
  assert.deepEqual(orderQueue(ids, labels, 'incorrect'), [3]);
  assert.deepEqual(orderQueue(ids, labels, 'unsure'), [2]);
  assert.deepEqual(orderQueue(ids, labels, 'all'), [0, 1, 2, 3, 4]);
});
