// The labeling app's logic without the DOM, with labels from a real label store (SQLite file): what the form shows
// for an item (its unsaved draft over its stored label), how saves and runs are numbered and which answers count,
// moving through the queue, the shortcuts, and the words the panel shows.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { tempDir } from '../../helpers/fixtures';
import { LabelStore } from '../../../src/core/labels/store';
import { quarryPath } from '../../../src/core/workspace/quarryLayout';
import { BUILTIN_TAGS } from '../../../src/core/labels/types';
import { SHORTCUTS, type QueueInfo, type RunOutcome } from '../../../src/protocol/labeling';
import { keyAction } from '../../../webview/labeling/keys';
import {
  dbName,
  execText,
  progressText,
  runVerdict,
  statusText,
  tagChoices,
  tagName,
  turnsText,
  whereText,
} from '../../../webview/labeling/labelText';
import {
  acceptRun,
  acceptSaved,
  hasNext,
  initialSession,
  isDirty,
  moveTarget,
  openItem,
  recordEdit,
  runRequest,
  saveRequest,
  toggleTag,
} from '../../../webview/labeling/session';
import { skyrlEpisode, trajectory } from '../rewards/fixtures';

const store = LabelStore.open(quarryPath(tempDir(), 'labels'), { labeler: 'ana' });
after(() => store.close());

const FILE = '/w/.quarry/trajectories.jsonl';
const queue = (over: Partial<QueueInfo> = {}): QueueInfo => ({
  file: FILE,
  fileLabel: 'trajectories.jsonl',
  filter: 'unlabeled-first',
  size: 3,
  total: 3,
  labeled: 0,
  problems: [],
  ...over,
});
const a = skyrlEpisode(['SELECT * FROM teacher'], 'SELECT name FROM teacher', { id: 'a' });
const b = skyrlEpisode([], 'SELECT 1', { id: 'b' });

test('an item opens with its stored label; an edit drafts it; a save covers the edits made before it was sent', () => {
  const stored = store.save({
    trajectoryId: 'a',
    file: FILE,
    recordSha: 'x',
    verdict: 'incorrect',
    correctedSql: 'SELECT name FROM teacher',
    tags: ['wrong join'],
    note: 'first look',
  });
  const s = initialSession(undefined);
  s.queue = queue();
  const { sameItem, form } = openItem(s, 0, a, stored);
  assert.equal(sameItem, false);
  assert.deepEqual(form, {
    verdict: 'incorrect',
    correctedSql: 'SELECT name FROM teacher',
    note: 'first look',
    tags: ['wrong join'],
  });
  assert.deepEqual([s.saved.position, s.saved.id, s.verdict, [...s.tags]], [0, 'a', 'incorrect', ['wrong join']]);
  assert.equal(saveRequest(s, form), null, 'nothing edited: nothing to save');

  s.verdict = 'correct';
  toggleTag(s, 'loop');
  toggleTag(s, 'wrong join');
  assert.ok(recordEdit(s, { correctedSql: '', note: 'second look' }));
  assert.ok(isDirty(s));
  assert.deepEqual(s.saved.draft, {
    id: 'a',
    verdict: 'correct',
    correctedSql: '',
    note: 'second look',
    tags: ['loop'],
    dirty: true,
  });
  const first = saveRequest(s, { correctedSql: '', note: 'second look' })!;
  assert.deepEqual(first, {
    type: 'save',
    seq: 1,
    id: 'a',
    verdict: 'correct',
    correctedSql: '',
    note: 'second look',
    tags: ['loop'],
  });
  // The reviewer types on while the first save is under way; the host stores what the save sent.
  const saved = { trajectoryId: 'a', file: FILE, recordSha: 'x', verdict: 'correct' as const, correctedSql: '' };
  recordEdit(s, { correctedSql: '', note: 'second look, more' });
  const label = store.save({ ...saved, tags: first.tags, note: first.note });
  assert.ok(acceptSaved(s, { type: 'saved', seq: first.seq, id: 'a', label, labeled: 1, total: 3 }));
  assert.equal(s.queue.labeled, 1);
  assert.equal(s.savePending, null);
  assert.ok(isDirty(s), 'the edit made after the save was sent is still unsaved');
  assert.equal(s.lastSavedAt, label.updatedAt);

  const second = saveRequest(s, { correctedSql: '', note: 'second look, more' })!;
  assert.equal(second.seq, 2);
  const label2 = store.save({ ...saved, tags: second.tags, note: second.note });
  assert.ok(acceptSaved(s, { type: 'saved', seq: 2, id: 'a', label: label2, labeled: 1, total: 3 }));
  assert.equal(isDirty(s), false);
  assert.equal(s.label?.note, 'second look, more');

  assert.equal(
    acceptSaved(s, { type: 'saved', seq: 9, id: 'b', label: label2, labeled: 2, total: 3 }),
    false,
    'a save of another trajectory leaves the form alone',
  );
  assert.equal(s.queue.labeled, 2, 'but counts');
});

test("unsaved edits survive the panel being hidden; another trajectory's draft or a clean one does not", () => {
  const draft = {
    id: 'b',
    verdict: 'unsure' as const,
    correctedSql: 'SELECT 2',
    tags: ['format'],
    note: 'n',
    dirty: true,
  };
  const s = initialSession({ position: 1, id: 'b', draft, showHelp: true });
  const { form } = openItem(s, 1, b, null);
  assert.deepEqual(form, { verdict: 'unsure', correctedSql: 'SELECT 2', note: 'n', tags: ['format'] });
  assert.ok(isDirty(s));

  const other = initialSession({ position: 0, id: 'b', draft, showHelp: false });
  assert.deepEqual(openItem(other, 0, a, null).form, { verdict: '', correctedSql: '', note: '', tags: [] });
  assert.equal(other.saved.draft, null);
  const clean = initialSession({ position: 1, id: 'b', draft: { ...draft, dirty: false }, showHelp: false });
  assert.equal(openItem(clean, 1, b, null).form.verdict, '');

  assert.equal(openItem(s, 1, b, null).sameItem, true, 'the same item again (a refresh)');
});

test('runs: blank SQL is refused; runs and saves share one numbering; only the awaited answer is shown', () => {
  const s = initialSession(undefined);
  assert.equal(runRequest(s, 'SELECT 1'), null, 'no trajectory shown');
  openItem(s, 0, a, null);
  assert.deepEqual(runRequest(s, '   '), { error: 'Write a corrected SQL first (e), or start from the final SQL.' });
  assert.deepEqual(runRequest(s, 'SELECT 1'), { type: 'run', seq: 1, id: 'a', sql: 'SELECT 1' });
  recordEdit(s, { correctedSql: 'SELECT 1', note: '' });
  assert.equal(saveRequest(s, { correctedSql: 'SELECT 1', note: '' })!.seq, 2);
  const again = runRequest(s, 'SELECT 2') as { seq: number };
  assert.equal(again.seq, 3);

  const outcome: RunOutcome = {
    columns: ['1'],
    rowCount: 1,
    error: null,
    against: 'none',
    match: null,
    reason: null,
    detail: null,
    ms: 1,
  };
  assert.equal(acceptRun(s, { type: 'runResult', seq: 1, id: 'a', outcome }), false, 'an older run');
  assert.equal(acceptRun(s, { type: 'runResult', seq: 3, id: 'b', outcome }), false, 'another trajectory');
  assert.equal(acceptRun(s, { type: 'runResult', seq: 3, id: 'a', outcome }), true);
  assert.equal(acceptRun(s, { type: 'runFailed', seq: 3, id: 'a', message: 'no' }), true);

  // A reloaded webview: the host sends the newest run again; later runs number after it.
  const reloaded = initialSession({ position: 0, id: 'a', draft: null, showHelp: false });
  openItem(reloaded, 0, a, null);
  assert.equal(acceptRun(reloaded, { type: 'runResult', seq: 7, id: 'a', outcome, restored: true }), true);
  assert.equal((runRequest(reloaded, 'SELECT 3') as { seq: number }).seq, 8);
  assert.equal(
    acceptRun(reloaded, { type: 'runResult', seq: 7, id: 'a', outcome, restored: true }),
    false,
    'a restored answer does not replace a run the reviewer is waiting on',
  );
});

test('moving: clamped to the queue, nowhere when already there; a verdict key moves on except on the last', () => {
  const s = initialSession(undefined);
  assert.equal(moveTarget(s, 1), null, 'no queue yet');
  s.queue = queue({ size: 3 });
  openItem(s, 0, a, null);
  assert.equal(moveTarget(s, 1), 1);
  assert.equal(moveTarget(s, -1), null);
  assert.equal(moveTarget(s, 10), 2);
  assert.ok(hasNext(s));
  openItem(s, 2, b, null);
  assert.equal(moveTarget(s, 1), null);
  assert.equal(hasNext(s), false);
  s.queue.size = 0;
  assert.equal(moveTarget(s, -1), null, 'an empty queue');
});

test('shortcuts: every key the help lists outside text fields has its action, and nothing else does', () => {
  assert.deepEqual(keyAction('j'), { kind: 'move', delta: 1 });
  assert.deepEqual(keyAction('n'), keyAction('ArrowDown'));
  assert.deepEqual(keyAction('k'), { kind: 'move', delta: -1 });
  assert.deepEqual(keyAction('p'), keyAction('ArrowUp'));
  assert.deepEqual(
    ['1', '2', '3'].map((k) => keyAction(k)),
    [
      { kind: 'verdict', verdict: 'correct' },
      { kind: 'verdict', verdict: 'incorrect' },
      { kind: 'verdict', verdict: 'unsure' },
    ],
  );
  assert.deepEqual(
    ['e', 't', 's', '?'].map((k) => keyAction(k)?.kind),
    ['editSql', 'tags', 'save', 'help'],
  );
  for (const k of ['x', 'a', 'Enter', 'toString', 'constructor']) assert.equal(keyAction(k), null, k);
  const listed = SHORTCUTS.flatMap(([keys]) => keys.split(' / '))
    .map((k) => ({ '↓': 'ArrowDown', '↑': 'ArrowUp' })[k] ?? k)
    .filter((k) => !['Ctrl+Enter', 'Escape', '1', '2', '3', '1 / 2 / 3'].includes(k));
  for (const k of listed) assert.ok(keyAction(k), `${k} is listed in the help`);
});

test("the panel's words: progress, position, database, turns, executions, run verdicts, status, tags", () => {
  const q = queue({ size: 1200, total: 1500, labeled: 1000 });
  assert.equal(progressText(q), `${(1000).toLocaleString()} / ${(1500).toLocaleString()} labeled`);
  assert.equal(whereText(q, 0), `item 1 of ${(1200).toLocaleString()} in the queue`);
  assert.equal(whereText(queue({ size: 0 }), 0), 'queue empty');

  assert.equal(dbName(a), 'school');
  const noId = trajectory({ id: 'p', turns: [], finalSql: null, dbPath: '/data/dbs/concert.sqlite' });
  noId.task.db.id = null;
  assert.equal(dbName(noId), 'concert.sqlite');
  assert.equal(turnsText(a), '2 turns');
  assert.equal(turnsText({ ...b, protocol: { ...b.protocol, budget: 5 } }), '1 turn of 5');

  const ok = skyrlEpisode(['SELECT name FROM teacher'], 'SELECT 1').turns[0];
  assert.equal(execText({ ...ok.exec!, rowCount: 1, columns: [] }), '1 row');
  assert.equal(
    execText({ ...ok.exec!, rowCount: 2500, columns: ['name', 'age'], truncated: true }),
    `${(2500).toLocaleString()} rows · name, age (cut)`,
  );
  assert.equal(
    execText({ ...ok.exec!, ok: false, errorClass: 'sql', error: 'no such column: nme' }),
    'sql: no such column: nme',
  );

  const base: RunOutcome = {
    columns: [],
    rowCount: 0,
    error: null,
    against: 'gold',
    match: true,
    reason: null,
    detail: null,
    ms: 1,
  };
  assert.deepEqual(runVerdict(base), { kind: 'ok', text: '✓ Matches the gold result.', match: true });
  assert.deepEqual(runVerdict({ ...base, against: 'final', match: false, reason: 'rows', detail: '3 vs 4' }), {
    kind: 'error',
    text: '✗ Differs from the final SQL’s result: rows (3 vs 4)',
    match: true,
  });
  assert.equal(runVerdict({ ...base, match: null, reason: 'gold fails' }).text, 'Not compared: gold fails');
  assert.equal(runVerdict({ ...base, against: 'none', match: null }).kind, 'muted');

  const label = store.save({
    trajectoryId: 'w',
    file: FILE,
    recordSha: 'y',
    verdict: null,
    correctedSql: null,
    tags: [],
    note: '',
  });
  const when = new Date(label.updatedAt).toLocaleString();
  const st = { saving: false, dirty: false, label: null, lastSavedAt: null };
  assert.equal(statusText(st), 'Not labeled yet.');
  assert.equal(statusText({ ...st, label }), `Labeled without a verdict by ana, ${when}.`);
  assert.equal(statusText({ ...st, label, lastSavedAt: label.updatedAt }), `Saved without a verdict by ana, ${when}.`);
  assert.equal(statusText({ ...st, label, dirty: true }), 'Unsaved changes (s saves; moving on saves too).');
  assert.equal(statusText({ ...st, label, dirty: true, saving: true }), 'Saving…');

  assert.equal(tagName('  Wrong   JOIN '), 'wrong join');
  assert.equal(tagName('   '), '');
  const known = store.tags();
  assert.deepEqual(
    known
      .filter((t) => t.builtin)
      .map((t) => t.name)
      .sort(),
    [...BUILTIN_TAGS].sort(),
  );
  const chips = tagChoices(known, new Set(['loop', 'my own']));
  assert.deepEqual(chips.slice(0, known.length), known);
  assert.deepEqual(chips.slice(known.length), [{ name: 'my own', builtin: false }], "the item's unlisted tag");
});
