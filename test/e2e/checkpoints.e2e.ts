// A finished training job's checkpoint into the Ask panel, as a user does it: the packaged extension in a fresh
// code-server, a finished job in the workspace's .quarry/jobs/ whose out/checkpoint-2 holds the tiny model's weights
// and the run's run.json (as quarry_trainer.train.sft writes them). "Quarry: Load Checkpoint…" from the palette, the
// job's checkpoint and "Export to ONNX" picked: the project's Python exports it, parity is checked and shown on the
// notification, whose "Use It" makes it the model; "Quarry: Switch Model…" lists it under Loaded checkpoints with its
// provenance; the Ask panel then answers with it (its trajectory names the loaded model). Needs the project's Python
// (.venv with the export extra): without it the spec skips. Screenshots in test-artifacts/screenshots/checkpoints-*.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEFAULT_TRAJECTORY_STORE } from '../../src/app/trajectoryStore';
import { openEditor, screenshotAfterEach, type Editor } from './harness';
import { finishedJobCheckpoint } from '../support/checkpointFixtures';

const repoRoot = join(__dirname, '..', '..', '..');
const python = join(repoRoot, '.venv', 'bin', 'python');
const JOB = 'sft-tiny-run';
const NAME = `${JOB}-step2`;
let ed: Editor;

before(async () => {
  if (!existsSync(python)) return;
  ed = await openEditor({
    name: 'checkpoints',
    settings: { 'quarry.python': python, 'quarry.agent.protocol': 'skyrl' },
    viewport: { width: 1400, height: 950 },
  });
  finishedJobCheckpoint(repoRoot, ed.workspace, JOB, { name: 'tiny sft' });
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('checkpoints', () => ed);

/** The notification whose text matches, from the notification center (opened with the status bar's bell). */
async function notification(re: RegExp) {
  const center = ed.page.locator('.notifications-center');
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (!(await center.isVisible().catch(() => false)))
      await ed.page
        .locator('[id="status.notifications"]')
        .click()
        .catch(() => {});
    const item = center.locator('.notification-list-item', { hasText: re }).first();
    if (await item.isVisible().catch(() => false)) return item;
    await ed.page.waitForTimeout(500);
  }
  throw new Error(`no notification matching ${re}`);
}

test('Load Checkpoint… takes a finished job checkpoint to the model the Ask panel uses, parity shown', async (t) => {
  if (!existsSync(python)) {
    t.skip(`no project Python at ${python} (npm run setup:python)`);
    return;
  }
  await ed.runCommand('Quarry: Load Checkpoint…');
  await ed.pick(/tiny sft · step 2/);
  await ed.pick('Export to ONNX');
  const done = await notification(/loaded sft-tiny-run-step2/);
  const text = await done.innerText();
  assert.match(text, /parity ok: 3 prompts decode the same tokens as transformers \(onnx\)/);
  await ed.screenshot('checkpoints-loaded');
  await done.locator('.monaco-button', { hasText: 'Use It' }).click();
  const registry = JSON.parse(readFileSync(join(ed.workspace, '.quarry', 'models.json'), 'utf8')) as {
    models: Array<{ name: string; spec: string; provenance: { jobId: string; step: number } }>;
  };
  const [entry] = registry.models;
  assert.deepEqual([entry.name, entry.provenance.jobId, entry.provenance.step], [NAME, JOB, 2]);

  await ed.page.keyboard.press('Escape');
  // The status bar names the model in use: the loaded checkpoint now.
  await ed.page.locator('.part.statusbar', { hasText: `onnx · ${NAME}` }).waitFor({ timeout: 30_000 });
  await ed.runCommand('Quarry: Switch Model…');
  const row = ed.page.locator('.quick-input-list .monaco-list-row', { hasText: NAME }).first();
  await row.waitFor({ timeout: 30_000 });
  assert.match(await row.innerText(), /job sft-tiny-run · step 2 · trl · recipe sft-tiny/);
  assert.equal(await row.locator('.codicon-check').count(), 1, 'the loaded checkpoint is the model in use');
  await ed.page.locator('.quick-input-list', { hasText: 'Loaded checkpoints' }).waitFor({ timeout: 10_000 });
  await ed.screenshot('checkpoints-model-picker');
  await ed.page.keyboard.press('Escape');

  await ed.runCommand('Quarry: Ask a Question…');
  await ed.answer('clinic');
  await ed.page
    .locator('.quick-input-widget .quick-input-title', { hasText: 'Quarry: Ask about data/clinic.sqlite' })
    .waitFor({ timeout: 15_000 });
  await ed.answer('How many patients are there?');
  const panel = await ed.webview('Q1.');
  await panel.locator('#x0-status', { hasText: /turns/ }).waitFor({ timeout: 120_000 });
  const storeFile = join(ed.workspace, DEFAULT_TRAJECTORY_STORE);
  for (let i = 0; i < 600 && !existsSync(storeFile); i++) await ed.page.waitForTimeout(200);
  let spec = '';
  for (let i = 0; i < 600 && !spec; i++) {
    const lines = existsSync(storeFile) ? readFileSync(storeFile, 'utf8').trim().split('\n').filter(Boolean) : [];
    spec = lines.length ? (JSON.parse(lines[lines.length - 1]) as { model: { spec: string } }).model.spec : '';
    if (!spec) await ed.page.waitForTimeout(200);
  }
  assert.equal(spec, `onnx:${join(ed.workspace, '.quarry', 'models', NAME)}`, 'the Ask panel answered with it');
  await ed.screenshot('checkpoints-ask');
});
