// Checkpoints back into the editor, in a real extension host: a finished job's checkpoint (the tiny model's weights in
// a TRL checkpoint-2 folder with the run's run.json, as `quarry_trainer.train.sft` writes them) goes through "Quarry:
// Load Checkpoint…" answered from code: exported to ONNX by the project's Python, parity checked, registered in
// .quarry/models.json with its provenance, and made the model the Ask panel uses (the trajectory of a question asked
// next names it). Then "Evaluate Checkpoint…" stores a bench report with it, a second model (a loopback replay server
// registered by hand) is evaluated too, and "Compare Checkpoints…" shows both side by side; a disagreement opens its
// two trajectories in Replay's compare view, and a message naming no disagreement is refused. Needs the project's
// Python (.venv with the export extra): without it the suite says so and skips.
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite, suiteSetup, suiteTeardown, test } from 'mocha';
import * as vscode from 'vscode';
import { ModelRegistry, type RegisteredModel } from '../../src/core/training/modelRegistry';
import { readTrajectories } from '../../src/core/trajectories/reader';
import type { ToApp as CompareToApp } from '../../src/protocol/compare';
import { startReplayServer, type ReplayServer } from '../support/openaiReplayServer';
import { finishedJobCheckpoint, servedOnlyModel } from '../support/checkpointFixtures';

const repoRoot = join(__dirname, '..', '..', '..');
const hasPython = existsSync(join(repoRoot, '.venv', 'bin', 'python'));
const cfg = () => vscode.workspace.getConfiguration('quarry');
/** Where the workspace's trajectory store is: quarry.trajectories.store, relative to the workspace folder. */
const quarryStore = () => {
  const s = cfg().get<string>('trajectories.store') ?? '.quarry/trajectories.jsonl';
  return s.startsWith('/') ? s : join(vscode.workspace.workspaceFolders![0].uri.fsPath, s);
};
const Q1 = 'How many patients are there?';
const Q2 = 'List the names of all doctors.';

suite('Checkpoints: load, use, evaluate, compare', () => {
  let ws: string;
  let server: ReplayServer;
  let jobId: string;
  let checkpoint: string;
  /** What the compare test showed, for the reload test after it. */
  let compared: { names: string[]; dataset: string } | undefined;

  suiteSetup(async function () {
    if (!hasPython) {
      console.log(`skipping: no project Python at ${join(repoRoot, '.venv')} (npm run setup:python)`);
      this.skip();
    }
    const ext = vscode.extensions.getExtension('quarry.quarry');
    assert.ok(ext);
    await ext.activate();
    ws = vscode.workspace.workspaceFolders![0].uri.fsPath;
    jobId = 'ckpt-job-1';
    checkpoint = finishedJobCheckpoint(repoRoot, ws, jobId, { spec: { model: 'media/models/tiny-sql' } });
    server = await startReplayServer({
      script: [
        { match: Q1, response: '<think>count</think>\n<solution>SELECT count(*) FROM patient</solution>' },
        { match: Q2, response: '<think>names</think>\n<solution>SELECT name FROM doctor</solution>' },
      ],
    });
  });

  suiteTeardown(async () => {
    // "Use it" writes where the setting already lives (the user's settings when unset): clear both.
    for (const k of ['model.backend', 'model.onnxPath', 'model.baseUrl', 'model.name']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Workspace);
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Global);
    }
    await server?.close();
  });

  test('one palette action loads a job checkpoint as the model the Ask panel uses, parity shown', async function () {
    this.timeout(300_000);
    const model = await vscode.commands.executeCommand<RegisteredModel>('quarry.loadCheckpoint', {
      checkpoint,
      jobId,
      name: 'sft-step2',
      serve: false,
      use: true,
    });
    assert.ok(model, 'the command returned the registered model');
    assert.equal(model.spec, `onnx:${join(ws, '.quarry', 'models', 'sft-step2')}`);
    assert.deepEqual(
      [model.parity?.equal, model.parity?.cases, model.parity?.against],
      [true, 3, 'onnx'],
      'parity between transformers and onnxruntime was checked and holds',
    );
    assert.deepEqual(
      [model.provenance.jobId, model.provenance.step, model.provenance.engine, model.provenance.recipe],
      [jobId, 2, 'trl', 'sft-tiny'],
    );
    assert.equal(new ModelRegistry(ws).require('sft-step2').spec, model.spec);
    assert.equal(cfg().get('model.backend'), 'onnx');
    assert.equal(cfg().get('model.onnxPath'), join(ws, '.quarry', 'models', 'sft-step2'));

    const outcome = await vscode.commands.executeCommand<{ id: string }>('quarry.ask', {
      db: join(ws, 'data', 'clinic.sqlite'),
      question: Q1,
    });
    assert.ok(outcome?.id);
    const store = quarryStore();
    const { records } = await readTrajectories(store);
    const mine = records.find((r) => r.id === outcome.id);
    assert.ok(mine, 'the question was recorded');
    assert.equal(mine.model.spec, model.spec, 'the Ask panel answered with the loaded checkpoint');
  });

  test('evaluated checkpoints compare side by side; a disagreement opens in Replay', async function () {
    this.timeout(300_000);
    const dataDir = join(ws, 'eval-data');
    mkdirSync(join(dataDir, 'clinic'), { recursive: true });
    cpSync(join(ws, 'data', 'clinic.sqlite'), join(dataDir, 'clinic', 'clinic.sqlite'));
    const dataset = join(dataDir, 'dev.json');
    writeFileSync(
      dataset,
      JSON.stringify([
        { db_id: 'clinic', question: Q1, query: 'SELECT count(*) FROM patient' },
        { db_id: 'clinic', question: Q2, query: 'SELECT name FROM doctor' },
      ]),
    );
    new ModelRegistry(ws).put(servedOnlyModel('replay-right', server.spec()));
    for (const name of ['sft-step2', 'replay-right']) {
      const ev = await vscode.commands.executeCommand<{ report: string; ex: { greedy: number } }>(
        'quarry.evaluateCheckpoint',
        { name, dataset: `spider:${dataset}`, dbDir: dataDir, protocol: 'skyrl' },
      );
      assert.ok(ev && existsSync(ev.report), `${name}'s report is stored`);
      if (name === 'replay-right') assert.equal(ev.ex.greedy, 1);
    }
    assert.equal(new ModelRegistry(ws).require('sft-step2').evaluations.length, 1);

    await vscode.commands.executeCommand('quarry.compareCheckpoints', {
      names: ['sft-step2', 'replay-right'],
      dataset: `spider:${dataset}`,
    });
    const hook = <T>(op: string, m?: unknown) => vscode.commands.executeCommand<T>('quarry.compare.testHook', op, m);
    let view: Extract<CompareToApp, { type: 'comparison' }>['view'] | undefined;
    for (;;) {
      const posted = await hook<CompareToApp[]>('posted');
      const c = posted.find((p) => p.type === 'comparison');
      if (c && c.type === 'comparison') {
        view = c.view;
        break;
      }
      const err = posted.find((p) => p.type === 'error');
      assert.ok(!err, JSON.stringify(err));
      await new Promise((r) => setTimeout(r, 100));
    }
    const c = view.comparison;
    assert.deepEqual(c.models, ['sft-step2', 'replay-right']);
    compared = { names: c.models, dataset: view.dataset };
    assert.equal(c.byLevel.all['replay-right']?.greedy, 1);
    assert.equal(c.common, 2);
    const wrongByTiny = c.disagreements.filter((d) => d.right.includes('replay-right'));
    assert.equal(wrongByTiny.length, c.disagreements.length);
    assert.ok(c.disagreements.length >= 1, 'the tiny model misses at least one question the replay server answers');

    await hook('send', { type: 'openPair', key: 'id:nope', a: 'sft-step2', b: 'replay-right' });
    assert.match((await hook<string[]>('rejected')).join('\n'), /not one of the disagreements/);

    const d = c.disagreements[0];
    await hook('send', { type: 'openPair', key: d.key, a: 'replay-right', b: 'sft-step2' });
    const [opened] = await hook<Array<{ file: string; a: string; b: string }>>('opened');
    assert.ok(opened && existsSync(opened.file));
    for (;;) {
      const posted = await vscode.commands.executeCommand<
        Array<{ type: string; show?: boolean; a?: { record: { id: string } } }>
      >('quarry.replay.testHook', 'posted');
      const cmp = posted.find((p) => p.type === 'compare' && p.show);
      if (cmp) {
        assert.equal(cmp.a?.record.id, opened.a);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  test('after a window reload the compare panel comes back on the same models and dataset', async function () {
    this.timeout(120_000);
    if (!compared) this.skip();
    const revive = (state: unknown) =>
      vscode.commands.executeCommand<string | null>('quarry.webviews.testHook', 'revive', 'quarry.compare', state);
    assert.ok(
      (await vscode.commands.executeCommand<string[]>('quarry.webviews.testHook', 'viewTypes')).includes(
        'quarry.compare',
      ),
    );
    // A state the webview could not have written is refused, said in words, and nothing is compared.
    assert.match(String(await revive({ names: ['sft-step2'], dataset: compared.dataset })), /1 models/);
    assert.match(String(await revive({ names: 'sft-step2', dataset: 1 })), /names should be array/);
    const hook = <T>(op: string) => vscode.commands.executeCommand<T>('quarry.compare.testHook', op);
    const before = (await hook<CompareToApp[]>('posted')).filter((p) => p.type === 'comparison').length;
    // The state the webview saved when it drew the comparison (webview/compare/main.ts).
    assert.equal(await revive({ names: compared.names, dataset: compared.dataset }), null);
    for (;;) {
      const posted = (await hook<CompareToApp[]>('posted')).filter((p) => p.type === 'comparison');
      if (posted.length > before) {
        const last = posted.at(-1)!;
        assert.ok(last.type === 'comparison');
        assert.deepEqual(last.view.comparison.models, compared.names);
        assert.equal(last.view.dataset, compared.dataset);
        assert.equal(last.view.comparison.common, 2, 'the numbers are read again from the registry');
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });
});
