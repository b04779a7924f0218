// The Reward Diagnostics app's logic without the DOM, over a run the real scorer produced: which trajectories the
// list keeps and in what order, the virtualised window and its keys, the run view's sentences and flag groups, the
// panel's shortcuts, and how a message from the host changes the state.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadPanel } from '../../../src/core/rewards';
import { scoreRun } from '../../../src/core/rewards/scoreRun';
import { type RunDiagnostics, runDiagnostics } from '../../../src/core/rewards/report';
import { trajectoryDiagnostics } from '../../../src/core/rewards/trajectoryReport';
import type { SourceInfo } from '../../../src/protocol/diagnostics';
import { num, pct } from '../../../webview/diagnostics/format';
import { panelAction } from '../../../webview/diagnostics/keys';
import {
  ROW_PX,
  listHeight,
  moveKey,
  rowWindow,
  scrollToRow,
  shownItems,
} from '../../../webview/diagnostics/listModel';
import {
  flagGroups,
  groupsSentence,
  notCompared,
  scopeHeading,
  zeroVarianceList,
} from '../../../webview/diagnostics/runText';
import { applyMessage, initialApp } from '../../../webview/diagnostics/state';
import { newPool, newResources, skyrlEpisode, trajectory } from '../rewards/fixtures';

const pool = newPool();
after(() => pool.close());

const GOLD = 'SELECT name FROM teacher';
const EMPTY_GOLD = "SELECT name FROM student WHERE name = 'Zed'";

/** Two GRPO groups (one right/wrong, one both winning on an empty gold), a badly formatted answer, one unparsable. */
async function scoredRun(): Promise<RunDiagnostics> {
  const records = [
    skyrlEpisode(['SELECT * FROM teacher'], GOLD, { id: 'g1-a', groupId: 'g1', gold: GOLD, difficulty: 'easy' }),
    skyrlEpisode([], 'SELECT subject FROM teacher', { id: 'g1-b', groupId: 'g1', gold: GOLD, difficulty: 'easy' }),
    skyrlEpisode([], 'SELECT name FROM student WHERE age > 99', {
      id: 'g2-a',
      groupId: 'g2',
      gold: EMPTY_GOLD,
      difficulty: 'medium',
    }),
    skyrlEpisode([], 'SELECT name FROM student WHERE age > 98', {
      id: 'g2-b',
      groupId: 'g2',
      gold: EMPTY_GOLD,
      difficulty: 'medium',
    }),
    trajectory({
      id: 'solo',
      turns: [{ assistant: 'SELECT name FROM teacher', kind: 'answer', sql: 'SELECT name FROM teacher' }],
      finalSql: 'SELECT name FROM teacher',
      gold: GOLD,
    }),
    skyrlEpisode([], 'SELEKT nonsense', { id: 'broken', gold: GOLD }),
  ];
  const resources = newResources(pool);
  return runDiagnostics(await scoreRun(records, loadPanel('skyrl'), { resources }), records, resources);
}

test('the list: lowest reward first (ties by id), filtered on id, verdict, hardness, reason and ODT tags', async () => {
  const run = await scoredRun();
  const shown = shownItems(run.items, '');
  assert.deepEqual(
    shown.map((it) => it.total),
    [...run.items.map((it) => it.total)].sort((a, b) => a - b),
  );
  assert.equal(shown[0].id, 'solo', 'the badly formatted answer scores −1');
  const ones = shown.filter((it) => it.total === 1).map((it) => it.id);
  assert.deepEqual(ones, [...ones].sort(), 'equal rewards by id');
  assert.notEqual(shown, run.items, 'a copy: the run keeps its own order');

  assert.deepEqual(
    shownItems(run.items, '  G1-B ').map((it) => it.id),
    ['g1-b'],
    'trimmed, any case',
  );
  const wrong = shownItems(run.items, 'incorrect').map((it) => it.id);
  assert.deepEqual(
    wrong.sort(),
    run.items
      .filter((it) => !it.correct)
      .map((it) => it.id)
      .sort(),
  );
  assert.ok(wrong.includes('g1-b'));
  // "correct" is inside "incorrect": the filter keeps both.
  assert.equal(shownItems(run.items, 'correct').length, run.items.length);
  assert.deepEqual(
    shownItems(run.items, 'medium').map((it) => it.id),
    ['g2-a', 'g2-b'],
  );

  const tagged = run.items.find((it) => it.odtTags?.length);
  assert.ok(tagged, 'the wrong prediction carries ODT tags');
  const tag = tagged.odtTags![0];
  const byTag = shownItems(run.items, tag);
  assert.ok(byTag.some((it) => it.id === tagged.id));
  assert.ok(byTag.every((it) => `${it.odtTags?.join(' ')} ${it.question} ${it.reason}`.includes(tag)));
  assert.deepEqual(shownItems(run.items, 'no such thing'), []);
});

test('the virtualised window: rows in view plus five either side, clamped to the list', () => {
  assert.deepEqual(rowWindow(0, 10 * ROW_PX, 1000), { first: 0, last: 15 });
  assert.deepEqual(rowWindow(100 * ROW_PX, 10 * ROW_PX, 1000), { first: 95, last: 115 });
  assert.deepEqual(rowWindow(995 * ROW_PX, 10 * ROW_PX, 1000), { first: 990, last: 1000 });
  assert.deepEqual(rowWindow(0, 10 * ROW_PX, 3), { first: 0, last: 3 });
  assert.equal(listHeight(0), ROW_PX + 2, 'an empty list keeps one row of height');
  assert.equal(listHeight(4), 4 * ROW_PX + 2);
  assert.equal(listHeight(10_000), 15 * ROW_PX + 2, 'fifteen rows, then it scrolls');
});

test('list keys move the active row within the list; the view scrolls only as far as needed', () => {
  const view = 10 * ROW_PX; // ten rows in view: a page is nine
  assert.equal(moveKey('ArrowDown', 3, 100, view), 4);
  assert.equal(moveKey('ArrowUp', 0, 100, view), 0);
  assert.equal(moveKey('ArrowDown', 99, 100, view), 99);
  assert.equal(moveKey('PageDown', 3, 100, view), 12);
  assert.equal(moveKey('PageUp', 3, 100, view), 0);
  assert.equal(moveKey('PageDown', 3, 100, ROW_PX), 4, 'a list one row high still moves a row a page');
  assert.equal(moveKey('Home', 50, 100, view), 0);
  assert.equal(moveKey('End', 5, 100, view), 99);
  assert.equal(moveKey('Enter', 5, 100, view), null, 'Enter opens; it is not a move');
  assert.equal(moveKey('j', 5, 100, view), null);

  assert.equal(scrollToRow(5, 0, view), 0, 'in view: no scroll');
  assert.equal(scrollToRow(10, 0, view), ROW_PX, 'just below: one row down');
  assert.equal(scrollToRow(2, 5 * ROW_PX, view), 2 * ROW_PX, 'above: to its top');
});

test("the run view's sentences: groups, zero-variance ids, the mismatch scope and what it left out", async () => {
  const run = await scoredRun();
  const g = run.groups!;
  assert.equal(
    groupsSentence(g),
    '2 questions with several samples; zero reward variance in 1 (50.0%): no gradient from them. ' +
      `Mean pass@G ${num(g.meanPass)}; solved by all samples 1, by none 0.`,
  );
  assert.equal(zeroVarianceList(g.zeroVarianceIds), 'g2');
  const many = Array.from({ length: 33 }, (_, i) => `q${i}`);
  assert.equal(zeroVarianceList(many), `${many.slice(0, 30).join(', ')} … (+3)`);

  const all = run.mismatch.scopes.find((s) => s.name === 'all')!;
  assert.equal(scopeHeading(all), `All trajectories: ${all.compared} of ${all.trajectories} compared`);
  assert.equal(all.excluded.predUnparsed, 1, 'the unparsable prediction is left out');
  assert.equal(notCompared(all), '1 prediction(s) that do not parse');
  assert.equal(
    notCompared({ ...all, excluded: { noSql: 2, predUnparsed: 0, goldUnparsed: 1 } }),
    '2 without SQL, 1 gold(s) that do not parse',
  );
  assert.equal(notCompared({ ...all, excluded: { noSql: 0, predUnparsed: 0, goldUnparsed: 0 } }), '');
});

test('flags by kind, in the order each kind first appears, the first few up front and the rest held back', async () => {
  const run = await scoredRun();
  const groups = flagGroups(run.flags);
  assert.deepEqual(
    groups.map((x) => x.kind),
    [...new Set(run.flags.map((f) => f.kind))],
  );
  assert.ok(
    groups.every((x) => x.rest.length === 0),
    'a small run shows every flag',
  );
  assert.deepEqual(
    groups.flatMap((x) => x.shown),
    [...run.flags].sort(
      (a, b) => groups.findIndex((x) => x.kind === a.kind) - groups.findIndex((x) => x.kind === b.kind),
    ),
  );
  const zero = run.flags.find((f) => f.kind === 'zero-variance-group')!;
  const many = Array.from({ length: 12 }, (_, i) => ({ ...zero, text: `group ${i}` }));
  const [held] = flagGroups(many);
  assert.deepEqual(
    held.shown.map((f) => f.text),
    many.slice(0, 10).map((f) => f.text),
  );
  assert.deepEqual(
    held.rest.map((f) => f.text),
    ['group 10', 'group 11'],
  );
});

test('numbers: percentages with one decimal, values rounded, a dash for nothing', () => {
  assert.equal(pct(0.5), '50.0%');
  assert.equal(pct(2 / 3), '66.7%');
  assert.equal(pct(null), '–');
  assert.equal(num(Math.SQRT1_2), '0.707');
  assert.equal(num(Math.SQRT1_2, 2), '0.71');
  assert.equal(num(1), '1');
  assert.equal(num(null), '–');
  assert.equal(num(undefined), '–');
});

test('shortcuts: r only back to an existing run, f only in the run view, none while typing or with a modifier', () => {
  const press = (key: string, more: Partial<Parameters<typeof panelAction>[0]> = {}) => ({
    key,
    ctrlKey: false,
    metaKey: false,
    altKey: false,
    typing: false,
    ...more,
  });
  const traj = { view: 'trajectory' as const, hasRun: true };
  assert.equal(panelAction(press('r'), traj), 'showRun');
  assert.equal(panelAction(press('r'), { ...traj, hasRun: false }), null);
  assert.equal(panelAction(press('r'), { view: 'run', hasRun: true }), null);
  assert.equal(panelAction(press('f'), { view: 'run', hasRun: true }), 'focusFilter');
  assert.equal(panelAction(press('f'), traj), null);
  assert.equal(panelAction(press('o'), traj), 'openFile');
  assert.equal(panelAction(press('p'), traj), 'focusPicker');
  assert.equal(panelAction(press('?'), traj), 'toggleHelp');
  assert.equal(panelAction(press('o', { typing: true }), traj), null);
  assert.equal(panelAction(press('o', { ctrlKey: true }), traj), null);
  assert.equal(panelAction(press('o', { altKey: true }), traj), null);
  assert.equal(panelAction(press('x'), traj), null);
});

test("messages: a run of another file clears the filter, the same file's keeps it; busy is not saved", async () => {
  const run = await scoredRun();
  const source = (file: string): SourceInfo => ({ file, label: file, records: 6, invalid: [] });
  const app = initialApp(undefined);
  assert.equal(app.saved.view, 'empty');
  assert.equal(
    applyMessage(app, { type: 'panels', panels: [{ value: 'skyrl', label: 'SkyRL' }], selected: 'skyrl' }),
    'header',
  );
  assert.equal(app.saved.selected, 'skyrl');
  assert.equal(applyMessage(app, { type: 'busy', text: 'Scoring…' }), 'status');
  assert.deepEqual(app.status, { kind: 'busy', text: 'Scoring…' });

  assert.equal(applyMessage(app, { type: 'run', source: source('/a.jsonl'), run }), 'page');
  assert.equal(app.status, null);
  assert.deepEqual([app.saved.view, app.saved.hasRun, app.saved.run === run], ['run', true, true]);
  app.saved.filter = 'incorrect';
  applyMessage(app, { type: 'run', source: source('/a.jsonl'), run });
  assert.equal(app.saved.filter, 'incorrect', 'a rescore of the same file keeps what the user typed');
  applyMessage(app, { type: 'run', source: source('/b.jsonl'), run });
  assert.equal(app.saved.filter, '', 'another file: its own list, unfiltered');

  const records = [skyrlEpisode([], 'SELECT subject FROM teacher', { id: 'one', gold: GOLD })];
  const trajectory = await trajectoryDiagnostics(records[0], loadPanel('skyrl'), newResources(pool));
  assert.equal(applyMessage(app, { type: 'trajectory', source: source('/b.jsonl'), trajectory, hasRun: true }), 'page');
  assert.deepEqual([app.saved.view, app.saved.run === run], ['trajectory', true], 'r goes back to the run kept');
  applyMessage(app, { type: 'trajectory', source: source('/c.jsonl'), trajectory, hasRun: false });
  assert.deepEqual([app.saved.view, app.saved.run, app.saved.hasRun], ['trajectory', null, false]);

  assert.equal(applyMessage(app, { type: 'error', text: 'no such file' }), 'status');
  assert.deepEqual(app.status, { kind: 'error', text: 'no such file' });

  const saved = initialApp({ ...app.saved, help: true });
  assert.equal(saved.saved.help, true, 'a restored panel starts from what it saved');
  assert.equal(saved.status, null, 'and asks the host again for what it is doing');
});
