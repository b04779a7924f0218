// Reward diagnostics in a real extension host. The fixture trajectory file is made by real runs of the core agent
// loop (skyrl protocol) against the sample workspace's clinic database, with a scripted in-process ChatModel (the
// model is the only stand-in) and the extension's own sandbox pool; two questions × two samples make GRPO groups.
// What the host posted to the panel comes from the test-only hook `quarry.diagnostics.testHook`.
import * as assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { runEpisode } from '../../src/core/agent/loop';
import type { ChatModel, GenerateRequest, GenerateResult } from '../../src/core/models/types';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { QuarryApi } from '../../src/extension/extension';
import type { RunDiagnostics, ToApp, TrajectoryDiagnostics } from '../../webview/diagnostics/protocol';

const EXTENSION_ID = 'quarry.quarry';
const Q_TOP = 'Which doctor has the most appointments?';
const GOLD_TOP = 'SELECT T2.name FROM appointment AS T1 JOIN doctor AS T2 ON T1.doctor_id = T2.doctor_id GROUP BY T2.name ORDER BY count(*) DESC LIMIT 1';
const Q_KIDS = 'How many patients were born after 2010?';
const GOLD_KIDS = 'SELECT count(*) FROM patient WHERE born > 2010';

/** Replies in order, cut at the request's first stop string as an OpenAI-compatible server would. */
function scripted(replies: string[]): ChatModel {
  let next = 0;
  return {
    spec: 'scripted:diagnostics-test',
    async close() {},
    async generate(req: GenerateRequest): Promise<GenerateResult> {
      const reply = replies[next++];
      if (reply === undefined) throw new Error(`the script has no reply #${next}`);
      let text = reply;
      let stopString: string | null = null;
      for (const s of req.sampling.stop ?? []) {
        const i = text.indexOf(s);
        if (i >= 0) { text = text.slice(0, i); stopString = s; break; }
      }
      req.onText?.(text);
      return { text, finishReason: 'stop', stopString, usage: { promptTokens: 10, completionTokens: 10 }, timings: { totalMs: 1, firstTokenMs: 1 } };
    },
  };
}

const think = (t: string) => `<think>${t}</think>\n`;

const hook = <T>(op: string, message?: unknown) => vscode.commands.executeCommand<T>('quarry.diagnostics.testHook', op, message);
const posted = () => hook<ToApp[]>('posted');

async function until<T>(what: string, f: () => Promise<T | undefined | false>): Promise<T> {
  for (;;) {
    const v = await f();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
    if (process.env.QUARRY_TEST_DEBUG) console.log(`waiting for ${what}`);
  }
}

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
    const run = (id: string, groupId: string, sample: number, question: string, gold: string, replies: string[]) => runEpisode({
      id, groupId, sample, protocolName: 'skyrl', config: { maxTurns: 4 }, pool, model: scripted(replies),
      task: { id: groupId, question, dbPath: db, gold },
    });
    records = [
      // Right answer after one exploratory query.
      await run('top-a', 'top', 0, Q_TOP, GOLD_TOP, [
        `${think('count per doctor')}<sql>SELECT doctor_id, count(*) FROM appointment GROUP BY doctor_id</sql>`,
        `${think('doctor 1 has most')}<solution>SELECT d.name FROM appointment a JOIN doctor d ON d.doctor_id = a.doctor_id GROUP BY d.name ORDER BY count(*) DESC LIMIT 1</solution>`,
      ]),
      // Wrong: forgets the join and the grouping.
      await run('top-b', 'top', 1, Q_TOP, GOLD_TOP, [
        `${think('guess')}<solution>SELECT name FROM doctor ORDER BY doctor_id DESC LIMIT 1</solution>`,
      ]),
      // Both samples right: a zero-variance group.
      await run('kids-a', 'kids', 0, Q_KIDS, GOLD_KIDS, [`${think('filter')}<solution>SELECT count(*) FROM patient WHERE born > 2010</solution>`]),
      await run('kids-b', 'kids', 1, Q_KIDS, GOLD_KIDS, [`${think('filter')}<solution>SELECT COUNT(patient_id) FROM patient WHERE born >= 2011</solution>`]),
    ];
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
    assert.deepEqual(records.map((r) => r.end), ['answer', 'answer', 'answer', 'answer']);
    assert.equal(records[0].turns.length, 2);
    assert.equal(records[0].turns[0].exec?.ok, true);
  });

  test('opening the file scores the run and sends the run diagnostics to the webview', async function () {
    this.timeout(120_000);
    await vscode.commands.executeCommand('quarry.openDiagnostics', file);
    const msg = await until('run message', () => lastOf('run'));
    const run: RunDiagnostics = msg.run;
    assert.equal(msg.source.file, file);
    assert.equal(msg.source.records, 4);
    assert.equal(run.panel, 'sqltrail');
    assert.equal(run.scored, 4);
    const correct = Object.fromEntries(run.items.map((it) => [it.id, it.correct]));
    assert.deepEqual(correct, { 'top-a': true, 'top-b': false, 'kids-a': true, 'kids-b': true });
    assert.equal(run.ex, 0.75);
    assert.equal(run.reward.n, 4);
    assert.deepEqual(run.turns.bins.map((b) => [b.lo, b.count]), [[1, 3], [2, 1]]);
    assert.deepEqual(run.terms.map((t) => t.name), ['exec', 'turns', 'schema', 'bigram', 'syntax', 'format']);
    // exec has weight 5: three of four right.
    assert.equal(run.terms[0].meanContribution, 5 * 0.75);
    assert.ok(run.byHardness.reduce((a, r) => a + r.count, 0) === 4);
    assert.ok(run.groups, 'two groups of two samples');
    assert.equal(run.groups.count, 2);
    assert.equal(run.groups.advantages.n, 4);
    assert.equal(run.groups.solvedByAll, 1);
    // Sent when the webview itself says it is ready: the app loaded in the real webview.
    const panels = await until('the webview to ask for the panels', () => lastOf('panels'));
    assert.deepEqual(panels?.panels.map((p) => p.value), ['skyrl', 'sqltrail', 'mtir', 'mtsqlr1', 'progress']);
    assert.equal(panels?.selected, 'sqltrail');
  });

  test('choosing the skyrl panel rescores: the kids group becomes zero-variance and is flagged with its items', async function () {
    this.timeout(120_000);
    await hook('clear');
    await hook('receive', { type: 'setPanel', panel: 'skyrl' });
    const msg = await until('skyrl run', async () => { const m = await lastOf('run'); return m?.run.panel === 'skyrl' ? m : undefined; });
    const run = msg.run;
    assert.deepEqual(run.terms.map((t) => t.name), ['format', 'exec']);
    assert.equal(run.groups!.zeroVariance, 1);
    assert.deepEqual(run.groups!.zeroVarianceIds, ['kids']);
    const flag = run.flags.find((f) => f.kind === 'zero-variance-group');
    assert.ok(flag);
    assert.deepEqual(flag.items, ['kids-a', 'kids-b']);
  });

  test('a flag item opens that trajectory: terms, ODT, clause F1 (a wrong answer shows its mismatches)', async function () {
    this.timeout(120_000);
    await hook('clear');
    await hook('receive', { type: 'openTrajectory', id: 'top-b' });
    const msg = await until('trajectory', () => lastOf('trajectory'));
    const d: TrajectoryDiagnostics = msg.trajectory;
    assert.equal(msg.hasRun, true);
    assert.equal(d.id, 'top-b');
    assert.equal(d.panel, 'skyrl');
    assert.deepEqual(d.terms.map((t) => [t.name, t.contribution]), [['format', 0], ['exec', 0]]);
    assert.ok(d.terms.every((t) => t.explanation.length > 0));
    assert.equal(d.exec?.correct, false);
    assert.ok(d.odt, 'an ODT for the final SQL');
    const tags = d.odt.tags.map((t) => t.tag);
    for (const t of ['JOIN_MISSING', 'GROUP_BY_MISSING']) assert.ok(tags.includes(t as never), tags.join());
    assert.equal(d.odt.pred?.children[0]?.status, 'mismatch');
    const join = d.clauses!.rows.find((r) => r.clause === 'join')!;
    assert.equal(join.f1, 0);
    assert.equal(d.verification, null);
  });

  test('every incoming message is validated: unknown types, bad fields and panels not offered are rejected', async () => {
    await hook('clear');
    await hook('receive', { type: 'runShell', cmd: 'rm -rf /' });
    await hook('receive', { type: 'openTrajectory', id: 42 });
    await hook('receive', { type: 'setPanel', panel: '/etc/passwd.json' });
    await hook('receive', 'not an object');
    const rejected = await hook<string[]>('rejected');
    assert.equal(rejected.length, 4);
    assert.match(rejected[0], /unknown message type "runShell"/);
    assert.match(rejected[1], /id should be string/);
    assert.match(rejected[2], /not one of the offered panels/);
    assert.deepEqual((await posted()).filter((m) => m.type !== 'busy'), []);
  });

  test('back to the run, then opening one trajectory directly with {file, id}', async function () {
    this.timeout(120_000);
    await hook('clear');
    await hook('receive', { type: 'showRun' });
    const back = await until('run again', () => lastOf('run'));
    assert.equal(back.run.panel, 'skyrl');
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openDiagnostics', { file, id: 'top-a' });
    const msg = await until('direct trajectory', () => lastOf('trajectory'));
    assert.equal(msg.trajectory.id, 'top-a');
    assert.equal(msg.hasRun, false);
    assert.equal(msg.trajectory.exec?.correct, true);
    assert.equal(msg.trajectory.turns, 2);
  });

  test('a file that is not trajectories is reported in the panel, not thrown', async function () {
    this.timeout(60_000);
    const bad = join(file, '..', 'not-trajectories.jsonl');
    writeFileSync(bad, '{"hello": 1}\n');
    await hook('clear');
    await vscode.commands.executeCommand('quarry.openDiagnostics', bad);
    const err = await until('error', () => lastOf('error'));
    assert.match(err.text, /holds no valid trajectory records/);
  });
});
