// Reward diagnostics in a real extension host. The fixture trajectory file is made by real runs of the core agent
// loop (skyrl and mtsqlr1) against the sample workspace's clinic database, with a scripted in-process ChatModel (the
// model is the only stand-in) and the extension's own sandbox pool (test/support/diagnosticsFixture.ts).
// What the host posted to the panel comes from the test-only hook `quarry.diagnostics.testHook`.
import * as assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { QuarryApi } from '../../src/extension/extension';
import type { DiagnosticsState, RunDiagnostics, ToApp, TrajectoryDiagnostics } from '../../src/protocol/diagnostics';
import { diagnosticsRun } from '../support/diagnosticsFixture';
import { until } from '../support/until';

const EXTENSION_ID = 'quarry.quarry';

const hook = <T>(op: string, message?: unknown) =>
  vscode.commands.executeCommand<T>('quarry.diagnostics.testHook', op, message);
const posted = () => hook<ToApp[]>('posted');
/** Hands `state` to the registered serializer with a fresh panel, as VS Code does after a window reload. */
const revive = (state: unknown) =>
  vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.diagnostics', state);

async function lastOf<K extends ToApp['type']>(type: K): Promise<Extract<ToApp, { type: K }> | undefined> {
  const all = await posted();
  return all.filter((m): m is Extract<ToApp, { type: K }> => m.type === type).pop();
}

suite('Diagnostics: quarry.openDiagnostics on a trajectory file from real agent runs', () => {
  let file: string;
  let records: TrajectoryRecord[];

  suiteSetup(async function () {
    this.timeout(120_000);
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is installed`);
    const { services } = (await ext.activate()) as QuarryApi;
    const pool = await services.pool();
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const db = join(folder, 'data', 'clinic.sqlite');
    records = await diagnosticsRun(pool, db);
    const dir = join(folder, '.quarry-test');
    mkdirSync(dir, { recursive: true });
    file = join(dir, 'diagnostics-run.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r) + '\n').join(''));
    await hook('clear');
  });

  suiteTeardown(async () => {
    await hook('close');
  });

  test('the fixture runs ended as scripted', () => {
    assert.deepEqual(
      records.map((r) => [r.id, r.end]),
      [
        ['top-a', 'answer'],
        ['top-b', 'answer'],
        ['kids-a', 'answer'],
        ['kids-b', 'answer'],
        ['fees-mt', 'answer'],
      ],
    );
    assert.equal(records[0].turns.length, 2);
    assert.equal(records[0].turns[0].exec?.ok, true);
    assert.deepEqual(
      records[4].turns.map((t) => t.action.verify ?? null),
      [null, { exec: 'pass' }, { memory: 'pass' }],
    );
  });

  test('opening the file scores the run and sends the run diagnostics to the webview', async function () {
    this.timeout(120_000);
    await vscode.commands.executeCommand('quarry.openDiagnostics', file);
    // The file's trajectories are SkyRL's (four of five): it opens on the skyrl panel, not sqltrail.
    const first = await until('run message', () => lastOf('run'));
    assert.equal(first.run.panel, 'skyrl');
    assert.equal((await lastOf('panels'))?.selected, 'skyrl');
    await hook('send', { type: 'setPanel', panel: 'sqltrail' });
    const msg = await until('the run scored with sqltrail', async () => {
      const m = await lastOf('run');
      return m?.run.panel === 'sqltrail' ? m : undefined;
    });
    const run: RunDiagnostics = msg.run;
    assert.equal(msg.source.file, file);
    assert.equal(msg.source.records, 5);
    assert.equal(run.panel, 'sqltrail');
    assert.equal(run.scored, 5);
    const correct = Object.fromEntries(run.items.map((it) => [it.id, it.correct]));
    assert.deepEqual(correct, { 'top-a': true, 'top-b': false, 'kids-a': true, 'kids-b': true, 'fees-mt': true });
    assert.equal(run.ex, 0.8);
    assert.equal(run.reward.n, 5);
    assert.deepEqual(
      run.turns.bins.map((b) => [b.lo, b.count]),
      [
        [1, 3],
        [2, 1],
        [3, 1],
      ],
    );
    assert.deepEqual(
      run.terms.map((t) => t.name),
      ['exec', 'turns', 'schema', 'bigram', 'syntax', 'format'],
    );
    // exec has weight 5: four of five right.
    assert.equal(run.terms[0].meanContribution, 5 * 0.8);
    assert.equal(
      run.byHardness.reduce((a, r) => a + r.count, 0),
      5,
    );
    assert.ok(run.groups, 'two groups of two samples');
    assert.equal(run.groups.count, 2);
    assert.equal(run.groups.advantages.n, 4);
    assert.equal(run.groups.solvedByAll, 1);
    // Sent when the webview itself says it is ready: the app loaded in the real webview.
    const panels = await until('the webview to ask for the panels', () => lastOf('panels'));
    assert.deepEqual(
      panels?.panels.map((p) => p.value),
      ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress', 'progress-oneshot'],
    );
    // Progress-SQL Table 8 over the run's final SQL: every trajectory has a gold and a parsable SQL here.
    assert.equal(run.mismatch.sql, 'final');
    assert.equal(run.mismatch.scopes[0].compared, 5);
    assert.deepEqual(
      run.mismatch.scopes[0].categories.map((c) => c.name),
      ['SELECT', 'JOIN', 'WHERE', 'GROUP'],
    );
    const wrong = run.items.find((it) => it.id === 'top-b')!;
    for (const t of ['JOIN_MISSING', 'GROUP_BY_MISSING'])
      assert.ok(wrong.odtTags?.includes(t as never), String(wrong.odtTags));
  });

  test(
    'choosing the skyrl panel rescores: the kids group ' + 'becomes zero-variance and is flagged with its items',
    async function () {
      this.timeout(120_000);
      await hook('clear');
      await hook('send', { type: 'setPanel', panel: 'skyrl' });
      const msg = await until('skyrl run', async () => {
        const m = await lastOf('run');
        return m?.run.panel === 'skyrl' ? m : undefined;
      });
      const run = msg.run;
      assert.deepEqual(
        run.terms.map((t) => t.name),
        ['format', 'exec'],
      );
      assert.equal(run.groups!.zeroVariance, 1);
      assert.deepEqual(run.groups!.zeroVarianceIds, ['kids']);
      const flag = run.flags.find((f) => f.kind === 'zero-variance-group');
      assert.ok(flag);
      assert.deepEqual(flag.items, ['kids-a', 'kids-b']);
    },
  );

  test(
    'a flag item opens that trajectory: terms, ODT, ' + 'clause F1 (a wrong answer shows its mismatches)',
    async function () {
      this.timeout(120_000);
      await hook('clear');
      await hook('send', { type: 'openTrajectory', id: 'top-b' });
      const msg = await until('trajectory', () => lastOf('trajectory'));
      const d: TrajectoryDiagnostics = msg.trajectory;
      assert.equal(msg.hasRun, true);
      assert.equal(d.id, 'top-b');
      assert.equal(d.panel, 'skyrl');
      assert.deepEqual(
        d.terms.map((t) => [t.name, t.contribution]),
        [
          ['format', 0],
          ['exec', 0],
        ],
      );
      assert.ok(d.terms.every((t) => t.explanation.length > 0));
      assert.equal(d.exec?.correct, false);
      assert.ok(d.odt, 'an ODT for the final SQL');
      const tags = d.odt.tags.map((t) => t.tag);
      for (const t of ['JOIN_MISSING', 'GROUP_BY_MISSING']) assert.ok(tags.includes(t as never), tags.join());
      assert.equal(d.odt.pred?.children[0]?.status, 'mismatch');
      const join = d.clauses!.rows.find((r) => r.clause === 'join')!;
      assert.equal(join.f1, 0);
      assert.equal(d.verification, null);
    },
  );

  test('an MTSQL-R1 trajectory shows its verification verdicts with the process reward each earned', async function () {
    this.timeout(120_000);
    await hook('clear');
    await hook('send', { type: 'setPanel', panel: 'mtsqlr1' });
    await until('mtsqlr1 view', async () => {
      const m = await lastOf('trajectory');
      return m?.trajectory.panel === 'mtsqlr1' ? m : undefined;
    });
    await hook('clear');
    await hook('send', { type: 'openTrajectory', id: 'fees-mt' });
    const d = (await until('fees-mt', () => lastOf('trajectory'))).trajectory;
    assert.equal(d.id, 'fees-mt');
    assert.deepEqual(
      d.terms.map((t) => t.name),
      ['ex', 'em', 'clause', 'verify'],
    );
    const v = d.verification!;
    assert.deepEqual(
      v.map((r) => [r.turn, r.kind, r.said, r.verdict]),
      [
        [1, 'E-VERIFY', 'pass', 'pass'],
        [2, 'M-VERIFY', 'pass', 'pass'],
      ],
    );
    // E-VERIFY: rows came back and the model said pass (1). M-VERIFY pass earns the candidate's clause F1, and the
    // candidate is the final SQL, whose clause F1 the same view reports.
    assert.equal(v[0].value, 1);
    assert.equal(v[1].value, d.clauses!.value);
    assert.equal(d.exec?.correct, true);
  });

  test(
    'every incoming message is validated: unknown types, ' + 'bad fields and panels not offered are rejected',
    async () => {
      await hook('clear');
      await hook('send', { type: 'runShell', cmd: 'rm -rf /' });
      await hook('send', { type: 'openTrajectory', id: 42 });
      await hook('send', { type: 'setPanel', panel: '/etc/passwd.json' });
      await hook('send', 'not an object');
      await hook('send', { type: 'setMismatchSql', sql: 'last' });
      await hook('send', { type: 'setMismatchSql' });
      const rejected = await hook<string[]>('rejected');
      assert.equal(rejected.length, 6);
      assert.match(rejected[0], /unknown message type "runShell"/);
      assert.match(rejected[1], /id should be string/);
      assert.match(rejected[2], /not one of the offered panels/);
      assert.match(rejected[4], /setMismatchSql: "last" is not one of final, first/);
      assert.match(rejected[5], /setMismatchSql: missing sql/);
      assert.deepEqual(
        (await posted()).filter((m) => m.type !== 'busy'),
        [],
      );
    },
  );

  test('back to the run, then opening one trajectory directly with {file, id}', async function () {
    this.timeout(120_000);
    await hook('clear');
    await hook('send', { type: 'showRun' });
    const back = await until('run again', () => lastOf('run'));
    // The panel was switched to mtsqlr1 in the trajectory view: the run is rescored with it on the way back.
    assert.equal(back.run.panel, 'mtsqlr1');
    assert.deepEqual(
      back.run.terms.map((t) => t.name),
      ['ex', 'em', 'clause', 'verify'],
    );
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openDiagnostics', { file, id: 'top-a' });
    const msg = await until('direct trajectory', () => lastOf('trajectory'));
    assert.equal(msg.trajectory.id, 'top-a');
    assert.equal(msg.hasRun, false);
    assert.equal(msg.trajectory.exec?.correct, true);
    assert.equal(msg.trajectory.turns, 2);
    // Opened on one trajectory, the panel is that trajectory's protocol's, as Replay picks it.
    assert.equal(msg.trajectory.panel, 'skyrl');
    assert.equal((await lastOf('panels'))?.selected, 'skyrl');
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openDiagnostics', { file, id: 'fees-mt' });
    const mt = await until('the mtsqlr1 trajectory', () => lastOf('trajectory'));
    assert.deepEqual([mt.trajectory.id, mt.trajectory.panel], ['fees-mt', 'mtsqlr1']);
  });

  test(
    "the mismatch rates can compare each trajectory's " + 'first SQL instead of its final one, without rescoring',
    async function () {
      this.timeout(120_000);
      await hook('clear');
      await hook('send', { type: 'showRun' });
      const before = (await until('run', () => lastOf('run'))).run;
      await hook('clear');
      await hook('send', { type: 'setMismatchSql', sql: 'first' });
      const after = (
        await until('first-SQL run', async () => {
          const m = await lastOf('run');
          return m?.run.mismatch.sql === 'first' ? m : undefined;
        })
      ).run;
      assert.deepEqual(after.terms, before.terms, 'the rewards are kept');
      assert.equal(after.mismatch.scopes[0].trajectories, 5);
      await hook('send', { type: 'setMismatchSql', sql: 'final' });
      await until('final again', async () => {
        const m = await lastOf('run');
        return m?.run.mismatch.sql === 'final' ? m : undefined;
      });
    },
  );

  test('a file that is not trajectories is reported in the panel, not thrown', async function () {
    this.timeout(60_000);
    const bad = join(file, '..', 'not-trajectories.jsonl');
    writeFileSync(bad, '{"hello": 1}\n');
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openDiagnostics', bad);
    const err = await until('error', () => lastOf('error'));
    assert.match(err.text, /holds no valid trajectory records/);
  });

  test('after a window reload the serializer brings back the same panel choice, run and trajectory', async function () {
    this.timeout(180_000);
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openDiagnostics', file);
    await until('run', () => lastOf('run'));
    await hook('send', { type: 'setPanel', panel: 'skyrl' });
    const run = await until('skyrl run', async () => {
      const m = await lastOf('run');
      return m?.run.panel === 'skyrl' ? m : undefined;
    });
    await hook('send', { type: 'openTrajectory', id: 'top-b' });
    const shown = await until('top-b', () => lastOf('trajectory'));
    // What the app saved (its DiagnosticsState) on that view when the window went away.
    const saved: DiagnosticsState = {
      panels: [],
      selected: 'skyrl',
      source: shown.source,
      run: run.run,
      trajectory: shown.trajectory,
      view: 'trajectory',
      hasRun: true,
      filter: '',
      help: false,
    };
    await hook('close');
    await hook('clear');
    assert.equal(await revive(JSON.parse(JSON.stringify(saved))), null);
    const again = await until('the trajectory again', () => lastOf('trajectory'));
    assert.deepEqual(
      [again.source.file, again.hasRun, again.trajectory.id, again.trajectory.panel],
      [file, true, 'top-b', 'skyrl'],
    );
    assert.deepEqual(again.trajectory, shown.trajectory);
    assert.deepEqual((await lastOf('run'))?.run, run.run, 'the run it came from is scored again with the same panel');
    const panels = await until('the revived webview to ask for the panels', () => lastOf('panels'));
    assert.equal(panels.selected, 'skyrl');

    await hook('close');
    await hook('clear');
    const relative = { ...saved, source: { ...saved.source, file: 'diagnostics-run.jsonl' } };
    assert.match((await revive(relative)) ?? '', /not an absolute path/);
    await hook('close');
    const noPanel = { ...saved, view: 'run', selected: '/nowhere/panel.json' };
    assert.match((await revive(noPanel)) ?? '', /neither built in nor a panel file/);
    const fallback = await until('the run with the default panel', () => lastOf('run'));
    assert.equal(
      fallback.run.panel,
      'skyrl',
      "an unusable panel falls back to the file's own protocol's panel; the file still opens",
    );
  });
});
