// Trajectory replay in a real extension host. The fixture file holds real runs of the core agent loop (skyrl) against
// the sample workspace's clinic database with a scripted in-process ChatModel (the model is the only stand-in) and
// the extension's own sandbox pool, plus one bad line and an unfinished last line, as a killed writer leaves.
// What the host posted to the panel comes from the test-only hook `quarry.replay.testHook`.
import * as assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { runEpisode } from '../../src/core/agent/loop';
import type { ChatModel } from '../../src/core/models/types';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { QuarryApi } from '../../src/extension/extension';
import { unpackRows, type ReplayAppState, type ToApp } from '../../src/protocol/replay';
import { LabelStore } from '../../src/core/labels/store';
import { recordSha } from '../../src/core/labels/recordSha';
import { scriptedModel } from '../support/scriptedModel';
import { until } from '../support/until';

const EXTENSION_ID = 'quarry.quarry';
const Q_TOP = 'Which doctor has the most appointments?';
const GOLD_TOP =
  'SELECT T2.name FROM appointment AS T1 JOIN doctor AS T2 ON T1.doctor_id = T2.doctor_id GROUP BY ' +
  'T2.name ORDER BY count(*) DESC LIMIT 1';
const Q_KIDS = 'How many patients were born after 2010?';
const GOLD_KIDS = 'SELECT count(*) FROM patient WHERE born > 2010';

const scripted = (replies: string[]): ChatModel =>
  scriptedModel(replies, 'scripted:replay-test', { usage: () => ({ promptTokens: 12, completionTokens: 7 }) });

const think = (t: string) => `<think>${t}</think>\n`;
const hook = <T>(op: string, message?: unknown) =>
  vscode.commands.executeCommand<T>('quarry.replay.testHook', op, message);
/** Hands `state` to the registered serializer with a fresh panel, as VS Code does after a window reload. */
const revive = (viewType: string, state: unknown) =>
  vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', viewType, state);
const tabLabels = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).map((t) => t.label);
const posted = () => hook<ToApp[]>('posted');

async function lastOf<K extends ToApp['type']>(type: K): Promise<Extract<ToApp, { type: K }> | undefined> {
  return (await posted()).filter((m): m is Extract<ToApp, { type: K }> => m.type === type).pop();
}

let seq = 100;
/** Sends a filter as the app would and returns the list of ids the host's answer keeps. */
async function filterIds(filter: Record<string, unknown>, ids: string[]): Promise<string[]> {
  const mySeq = ++seq;
  await hook('send', { type: 'filter', seq: mySeq, filter });
  const view = await until(`view ${mySeq}`, async () =>
    (await posted()).filter((m): m is Extract<ToApp, { type: 'view' }> => m.type === 'view' && m.seq === mySeq).pop(),
  );
  return view.keys.map((k) => ids[k]);
}

suite('Replay: quarry.openReplay on a trajectory file from real agent runs', () => {
  let file: string;
  let records: TrajectoryRecord[];
  let ids: string[];

  suiteSetup(async function () {
    this.timeout(120_000);
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    const { services } = (await ext.activate()) as QuarryApi;
    const pool = await services.pool();
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const db = join(folder, 'data', 'clinic.sqlite');
    const run = (
      id: string,
      groupId: string,
      sample: number,
      question: string,
      gold: string | undefined,
      replies: string[],
      meta?: Record<string, unknown>,
    ) =>
      runEpisode({
        id,
        groupId,
        sample,
        protocolName: 'skyrl',
        config: { maxTurns: 4 },
        pool,
        model: scripted(replies),
        meta,
        task: { id: groupId, question, dbPath: db, gold },
      });
    records = [
      await run(
        'top-a',
        'top',
        0,
        Q_TOP,
        GOLD_TOP,
        [
          `${think('count per doctor')}<sql>SELECT doctor_id, count(*) FROM appointment GROUP BY doctor_id</sql>`,
          `${think('doctor 1 has most')}<solution>SELECT d.name FROM appointment a JOIN doctor d ON ` +
            `d.doctor_id = a.doctor_id GROUP BY d.name ORDER BY count(*) DESC LIMIT 1</solution>`,
        ],
        { label: 'good' },
      ),
      await run(
        'top-b',
        'top',
        1,
        Q_TOP,
        GOLD_TOP,
        [`${think('guess')}<solution>SELECT name FROM doctor ORDER BY doctor_id DESC LIMIT 1</solution>`],
        { label: 'wrong join' },
      ),
      await run('top-c', 'top', 2, Q_TOP, GOLD_TOP, [
        `${think('try')}<sql>SELECT nme FROM doctor</sql>`,
        `${think('typo; look at appointments')}<sql>SELECT doctor_id FROM appointment</sql>`,
        `${think('count')}<solution>SELECT d.name FROM doctor d JOIN appointment a ON a.doctor_id = ` +
          `d.doctor_id GROUP BY d.doctor_id ORDER BY count(*) DESC LIMIT 1</solution>`,
      ]),
      await run('kids-a', 'kids', 0, Q_KIDS, GOLD_KIDS, [
        `${think('filter')}<solution>SELECT count(*) FROM patient WHERE born > 2010</solution>`,
      ]),
      await run('kids-b', 'kids', 1, Q_KIDS, GOLD_KIDS, [
        `${think('filter')}<solution>SELECT COUNT(patient_id) FROM patient WHERE born >= 2011</solution>`,
      ]),
      await run('free', 'free', 0, 'List the cities of our patients', undefined, [
        `${think('cities')}<solution>SELECT DISTINCT city FROM patient</solution>`,
      ]),
    ];
    ids = records.map((r) => r.id);
    const dir = join(folder, '.quarry-test');
    mkdirSync(dir, { recursive: true });
    file = join(dir, 'replay-run.jsonl');
    const lines = records.map((r) => JSON.stringify(r));
    lines.splice(3, 0, '{"schema":"quarry.trajectory/1","id":"broken"}');
    writeFileSync(file, lines.join('\n') + '\n{"schema":"quarry.traj');
    await hook('clear');
  });

  suiteTeardown(async () => {
    await hook('close');
  });

  test('the fixture runs ended as scripted', () => {
    assert.deepEqual(
      records.map((r) => r.end),
      ['answer', 'answer', 'answer', 'answer', 'answer', 'answer'],
    );
    assert.deepEqual(
      records.map((r) => r.turns.length),
      [2, 1, 3, 1, 1, 1],
    );
    assert.equal(records[2].turns[0].exec?.ok, false, 'the typo fails to run');
  });

  test(
    'opening the file lists every valid trajectory, ' + 'reports the bad and unfinished lines, and scores lazily',
    async function () {
      this.timeout(120_000);
      await vscode.commands.executeCommand('quarry.openReplay', file);
      const list = await until('list', () => lastOf('list'));
      assert.equal(list.file, file);
      const rows = unpackRows(list.rows);
      assert.deepEqual(
        rows.map((r) => r.id),
        ids,
      );
      assert.deepEqual(
        rows.map((r) => r.line),
        [1, 2, 3, 5, 6, 7],
        'lines count the bad line',
      );
      assert.deepEqual(
        rows.map((r) => r.turns),
        [2, 1, 3, 1, 1, 1],
      );
      assert.deepEqual(
        rows.map((r) => r.errors),
        [0, 0, 1, 0, 0, 0],
      );
      assert.deepEqual(
        rows.map((r) => r.label),
        ['good', 'wrong join', null, null, null, null],
      );
      assert.equal(rows[0].db, 'clinic.sqlite');
      assert.equal(list.invalid.length, 1);
      assert.equal(list.invalid[0].line, 4);
      assert.match(list.invalid[0].message, /line 4/);
      assert.match(list.truncated ?? '', /line 8 is unfinished/);
      const view = await until('view', () => lastOf('view'));
      assert.equal(view.total, 6);
      assert.equal(view.keys.length, 6);
      assert.deepEqual(view.facets.protocols, [{ value: 'skyrl', count: 6 }]);

      await hook('idle');
      const scores = (await posted()).filter((m): m is Extract<ToApp, { type: 'scores' }> => m.type === 'scores');
      const last = scores[scores.length - 1];
      assert.equal(last.running, false);
      assert.equal(last.done, 6, 'every record has an outcome (scored or skipped)');
      // The header counts the five with a reward, and says why the sixth has none (not "6/6 scored").
      assert.equal(last.scored, 5);
      assert.equal(last.unscored, 'no gold SQL in the task');
      const verdict = new Map<number, string | null>();
      const note = new Map<number, string | null>();
      for (const s of scores)
        for (const u of s.updates) {
          verdict.set(u.key, u.verdict);
          note.set(u.key, u.note);
        }
      assert.deepEqual(
        ids.map((_, k) => verdict.get(k)),
        ['correct', 'incorrect', 'correct', 'correct', 'correct', null],
      );
      assert.equal(note.get(5), 'no gold SQL in the task');
    },
  );

  test('filters: verdict, label, turns, reward, text — each answered with the matching keys', async function () {
    this.timeout(60_000);
    assert.deepEqual(await filterIds({ verdict: 'correct' }, ids), ['top-a', 'top-c', 'kids-a', 'kids-b']);
    assert.deepEqual(await filterIds({ verdict: 'incorrect' }, ids), ['top-b']);
    assert.deepEqual(await filterIds({ verdict: 'unscored' }, ids), ['free']);
    assert.deepEqual(await filterIds({ label: 'wrong join' }, ids), ['top-b']);
    assert.deepEqual(await filterIds({ label: '(none)' }, ids), ['top-c', 'kids-a', 'kids-b', 'free']);
    assert.deepEqual(await filterIds({ turnsMin: 2 }, ids), ['top-a', 'top-c']);
    // skyrl panel: exec is +1 right, 0 wrong (format valid) — the reward range keeps the right answers.
    assert.deepEqual(await filterIds({ rewardMin: 0.5 }, ids), ['top-a', 'top-c', 'kids-a', 'kids-b']);
    assert.deepEqual(await filterIds({ rewardMax: 0.5 }, ids), ['top-b']);
    assert.deepEqual(await filterIds({ text: 'nme' }, ids), ['top-c'], 'search sees SQL of every turn');
    assert.deepEqual(await filterIds({ text: 'patients born' }, ids), ['kids-a', 'kids-b']);
    assert.deepEqual(await filterIds({ text: 'cities', verdict: 'correct' }, ids), []);
    assert.deepEqual(
      await filterIds({ model: 'scripted:replay-test', db: 'clinic.sqlite', protocol: 'skyrl' }, ids),
      ids,
    );
    assert.deepEqual(await filterIds({}, ids), ids);
  });

  test('selecting a trajectory sends its full record, then its reward terms with explanations', async function () {
    this.timeout(60_000);
    await hook('clear');
    await hook('send', { type: 'select', key: 2 });
    const detail = await until('detail', () => lastOf('detail'));
    assert.equal(detail.record.id, 'top-c');
    assert.equal(detail.record.turns.length, 3);
    const ex = await until('explanation', () => lastOf('explanation'));
    assert.equal(ex.key, 2);
    assert.equal(ex.error, null);
    assert.ok(ex.explanation);
    assert.equal(ex.explanation.panel, 'skyrl');
    assert.equal(ex.explanation.correct, true);
    assert.deepEqual(
      ex.explanation.terms.map((t) => t.name),
      ['format', 'exec'],
    );
    assert.ok(ex.explanation.terms.every((t) => t.explanation.length > 0));
    // No gold: the detail still opens, the reward says why it is missing.
    await hook('clear');
    await hook('send', { type: 'select', key: 5 });
    const free = await until('unscored explanation', () => lastOf('explanation'));
    assert.equal(free.explanation, null);
    assert.equal(free.error, 'no gold SQL in the task');
  });

  test('the reward panel can be switched: rewards are recomputed with the chosen panel', async function () {
    this.timeout(120_000);
    await hook('clear');
    await hook('send', { type: 'setPanel', panel: 'sqltrail' });
    await hook('idle');
    const scores = (await posted()).filter((m): m is Extract<ToApp, { type: 'scores' }> => m.type === 'scores');
    const reward = new Map<number, number | null>();
    for (const s of scores) for (const u of s.updates) reward.set(u.key, u.reward);
    // SQL-Trail's exec term has weight 5: right answers score well above wrong ones.
    const a = reward.get(0) ?? 0,
      b = reward.get(1) ?? 0;
    assert.ok(a > 4 && a - b > 2, `top-a ${a}, top-b ${b}`);
    await hook('send', { type: 'setPanel', panel: 'auto' });
    await hook('idle');
  });

  test('compare two trajectories: the final SQL diff marks what differs', async () => {
    await hook('clear');
    await hook('send', { type: 'compare', a: 0, b: 1 });
    const c = await until('compare', () => lastOf('compare'));
    assert.equal(c.a.record.id, 'top-a');
    assert.equal(c.b.record.id, 'top-b');
    assert.equal(c.diff.map((p) => p.a).join(''), records[0].finalSql);
    assert.equal(c.diff.map((p) => p.b).join(''), records[1].finalSql);
    assert.ok(c.diff.some((p) => p.op === 'removed' && /JOIN/.test(p.a)));
    assert.ok(c.diff.some((p) => p.op === 'same'));
  });

  test('group view: every sample of the question with terms, advantages and group statistics', async function () {
    this.timeout(60_000);
    await hook('clear');
    await hook('send', { type: 'group', key: 1 });
    const g = await until('group', () => lastOf('group'));
    assert.equal(g.groupId, 'top');
    assert.deepEqual(
      g.members.map((m) => m.record.id),
      ['top-a', 'top-b', 'top-c'],
    );
    assert.equal(g.stats.size, 3);
    assert.equal(g.stats.correct, 2);
    assert.equal(g.stats.zeroVariance, false);
    const adv = g.members.map((m) => m.advantage!);
    assert.ok(adv[0] > 0 && adv[1] < 0 && adv[2] > 0, adv.join());
    assert.ok(Math.abs(adv.reduce((a, b) => a + b, 0)) < 1e-6);
    await hook('clear');
    await hook('send', { type: 'group', key: 3 });
    const kids = await until('kids group', () => lastOf('group'));
    assert.equal(
      kids.stats.zeroVariance,
      true,
      `both samples right: no GRPO signal ` +
        `(${JSON.stringify(kids.members.map((m) => [kids.panel, m.explanation?.terms]))})`,
    );
  });

  test('every incoming message is validated; bad ones are rejected and reported', async () => {
    await hook('clear');
    await hook('send', { type: 'runShell', cmd: 'rm -rf /' });
    await hook('send', { type: 'select', key: '2' });
    await hook('send', { type: 'filter', seq: 1, filter: 'verdict=correct' });
    await hook('send', 42);
    const rejected = await hook<string[]>('rejected');
    assert.equal(rejected.length, 4);
    assert.match(rejected[0], /unknown message type "runShell"/);
    assert.match(rejected[1], /key should be number/);
    assert.match(rejected[2], /filter should be object/);
    assert.match(rejected[3], /not an object/);
    const errors = (await posted()).filter((m) => m.type === 'error');
    assert.equal(errors.length, 4);
    await hook('clear');
    await hook('send', { type: 'select', key: 99 });
    assert.match((await lastOf('error'))?.message ?? '', /no trajectory #99/);
    await hook('send', { type: 'setPanel', panel: 'rm -rf' });
    assert.match((await lastOf('error'))?.message ?? '', /unknown reward panel/);
  });

  test(
    'labels from the workspace label store show in the ' + 'list and the label filter (store over meta.label)',
    async function () {
      this.timeout(60_000);
      await vscode.commands.executeCommand('quarry.openReplay', file);
      await until('list', () => lastOf('list'));
      const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
      const store = LabelStore.open(join(folder, '.quarry', 'labels.sqlite'));
      try {
        store.save({
          trajectoryId: 'top-c',
          file,
          recordSha: recordSha(records[2]),
          verdict: 'incorrect',
          correctedSql: null,
          tags: ['loop'],
          note: '',
        });
        store.save({
          trajectoryId: 'top-b',
          file,
          recordSha: recordSha(records[1]),
          verdict: 'correct',
          correctedSql: null,
          tags: [],
          note: 'lucky',
        });
      } finally {
        store.close();
      }
      await hook('clear');
      await hook('refreshLabels');
      const list = await until('list with labels', () => lastOf('list'));
      assert.deepEqual(
        unpackRows(list.rows).map((r) => r.label),
        ['good', 'correct', 'incorrect · loop', null, null, null],
      );
      assert.deepEqual(await filterIds({ label: 'incorrect · loop' }, ids), ['top-c']);
      assert.deepEqual(
        await filterIds({ label: 'wrong join' }, ids),
        [],
        "the reviewer's label replaces the producer's tag",
      );
      await filterIds({}, ids);
    },
  );

  test(
    'scores are kept across sessions: reopened without the in-memory cache, the list arrives scored and ' +
      'nothing runs',
    async function () {
      this.timeout(60_000);
      await hook('forgetScores');
      await hook('close');
      await hook('clear');
      await vscode.commands.executeCommand('quarry.openReplay', file);
      const list = await until('list', () => lastOf('list'));
      await hook('idle');
      assert.deepEqual(
        unpackRows(list.rows).map((r) => r.verdict),
        ['correct', 'incorrect', 'correct', 'correct', 'correct', null],
      );
      assert.deepEqual(
        unpackRows(list.rows).map((r) => r.verdictSource),
        ['computed', 'computed', 'computed', 'computed', 'computed', null],
      );
      const scores = (await posted()).filter((m): m is Extract<ToApp, { type: 'scores' }> => m.type === 'scores');
      assert.ok(scores.length > 0);
      assert.ok(
        scores.every((s) => s.updates.length === 0 && s.done === 6),
        'no trajectory was scored again',
      );
    },
  );

  test('{file, id} opens the list on that trajectory; a missing file is reported, not thrown', async function () {
    this.timeout(60_000);
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openReplay', { file, id: 'kids-b' });
    const d = await until('detail of kids-b', () => lastOf('detail'));
    assert.equal(d.record.id, 'kids-b');
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openReplay', join(file, '..', 'nope.jsonl'));
    const err = await until('error', () => lastOf('error'));
    assert.match(err.message, /no such trajectory file: .*nope\.jsonl/);
  });

  test('after a window reload the serializer brings the panel back on its file, trajectory, turn', async function () {
    this.timeout(120_000);
    const types = await vscode.commands.executeCommand<string[]>('quarry.webviews.testHook', 'viewTypes');
    assert.deepEqual([...types].sort(), [
      'quarry.ask',
      'quarry.compare',
      'quarry.diagnostics',
      'quarry.jobs',
      'quarry.labeling',
      'quarry.preview',
      'quarry.replay',
      'quarry.results',
    ]);
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openReplay', { file, id: 'top-c' });
    const before = {
      list: await until('list', () => lastOf('list')),
      detail: await until('detail', () => lastOf('detail')),
    };
    await hook('idle');
    // What the app saved (host.saveState) on the last trajectory it showed, when the window went away.
    const saved: ReplayAppState = {
      file,
      filter: { verdict: 'correct' },
      selectedId: 'top-c',
      markedIds: ['top-a', 'top-c'],
      view: 'detail',
      turn: 2,
      scrollTop: 0,
    };
    await hook('close');
    await until('the replay tab to close', async () => !tabLabels().includes('Replay: replay-run.jsonl'));
    await hook('clear');
    assert.equal(await revive('quarry.replay', JSON.parse(JSON.stringify(saved))), null, 'the saved state is used');
    const list = await until('the list again', () => lastOf('list'));
    assert.equal(list.file, file);
    assert.deepEqual(unpackRows(list.rows), unpackRows(before.list.rows), 'the same rows, labels and scores');
    assert.deepEqual([list.invalid, list.truncated], [before.list.invalid, before.list.truncated]);
    const detail = await until('the trajectory again', () => lastOf('detail'));
    assert.deepEqual([detail.record.id, detail.turn], ['top-c', 2], 'on the turn it was left on');
    assert.deepEqual(detail.record, before.detail.record);
    await until('the revived tab is titled as before', async () => tabLabels().includes('Replay: replay-run.jsonl'));
    // The revived panel is the one the host and its commands talk to.
    await hook('clear');
    await hook('send', { type: 'select', key: 0 });
    assert.equal((await until('a selection in the revived panel', () => lastOf('detail'))).record.id, 'top-a');

    // A state the host cannot use (here a relative path) is refused with the reason; the panel comes back empty.
    await hook('close');
    await hook('clear');
    const relative = { ...saved, file: 'runs/replay-run.jsonl' };
    assert.match((await revive('quarry.replay', relative)) ?? '', /file is not an absolute path/);
    assert.deepEqual(
      (await posted()).filter((m) => m.type === 'list'),
      [],
      'nothing was read',
    );
    assert.match(
      (await lastOf('error'))?.message ?? '',
      /could not come back .*not an absolute path/,
      'the panel says why',
    );
    await hook('close');
  });
});
