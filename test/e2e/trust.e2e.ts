// Workspace Trust in the real editor: the packaged extension in a fresh code-server with Workspace Trust ON and the
// sample workspace opened untrusted (Restricted Mode), as a cloned repository would be. The workspace carries what
// an attacker could plant: a .quarry/targets.json naming an ssh host, a .quarry/models.json naming a model server,
// a running job whose recorded pid is gone (asking its target would mark it lost), and a .venv/bin/python that
// leaves a marker file when run. Quarry says once that the folder is untrusted; Train a Model…, Load Checkpoint…,
// Unload Checkpoint… and Check Training Environment each say why they are off and offer Trust Folder…, and nothing
// runs the planted Python; the job is listed as recorded, not followed. Ask (the bundled tiny ONNX model), Run Query
// (a .sql file, Ctrl+Enter), Replay and Labeling work. Then Trust Folder… from a refusal trusts the folder, and
// without a reload the job is followed (now lost) and Train a Model… opens its wizard.
// Screenshots in test-artifacts/screenshots/trust-*.png.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import Database from 'better-sqlite3';
import type { Frame } from 'playwright-core';
import { DEFAULT_TRAJECTORY_STORE } from '../../src/app/trajectoryStore';
import { JobStore } from '../../src/app/jobs/store';
import { newJobRecord } from '../../src/core/training/jobs/job';
import { ModelRegistry } from '../../src/core/training/modelRegistry';
import { servedOnlyModel } from '../support/checkpointFixtures';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const JOB = 'planted-run';
const QUESTION = 'How many books are there?';
let ed: Editor;
let marker: string;
let doctors: number;

before(async () => {
  ed = await openEditor({
    name: 'trust',
    untrusted: true,
    samples: true,
    settings: { 'quarry.model.backend': 'onnx', 'quarry.agent.protocol': 'skyrl', 'quarry.agent.maxTurns': 2 },
    viewport: { width: 1440, height: 950 },
  });
  const ws = ed.workspace;
  marker = join(ws, 'PLANTED-PYTHON-RAN');
  // What a hostile repository could carry.
  mkdirSync(join(ws, '.venv', 'bin'), { recursive: true });
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  writeFileSync(join(ws, '.venv', 'bin', 'python'), `#!/bin/sh\ntouch '${marker}'\nexit 1\n`);
  chmodSync(join(ws, '.venv', 'bin', 'python'), 0o755);
  writeFileSync(
    join(ws, '.quarry', 'targets.json'),
    JSON.stringify({ 'gpu-box': { kind: 'ssh', host: 'attacker.invalid', remoteDir: '/tmp/quarry' } }),
  );
  new ModelRegistry(ws).put(servedOnlyModel('planted-server', 'openai:http://127.0.0.1:9/v1#planted'));
  // A running job whose process is gone: its target (local) would say "lost" if it were asked.
  const gone = spawnSync('true');
  assert.ok(gone.pid, 'a finished process for its pid');
  const job = newJobRecord({ target: 'local', name: JOB, command: ['sleep', '1000'] }, JOB);
  new JobStore(ws).create({
    ...job,
    status: 'running',
    startedAt: new Date().toISOString(),
    remote: { pid: gone.pid },
  });
  const db = new Database(join(ws, 'data', 'clinic.sqlite'), { readonly: true });
  doctors = db.prepare('SELECT count(*) FROM doctor').pluck().get() as number;
  db.close();
  writeFileSync(join(ws, 'doctors.sql'), '-- doctors\nSELECT count(*) AS doctors FROM doctor;\n');
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('trust', () => ed);

async function clearNotifications(): Promise<void> {
  await ed.runCommand('Notifications: Clear All Notifications');
}

function jobStatus(): string {
  return (
    JSON.parse(readFileSync(join(ed.workspace, '.quarry', 'jobs', JOB, 'job.json'), 'utf8')) as { status: string }
  ).status;
}

test('the folder opens in Restricted Mode; Quarry says once that it is untrusted, offering Trust Folder…', async () => {
  await ed.page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).first().waitFor({ timeout: 60_000 });
  const notice = await ed.notification(/Quarry: this folder is not trusted/);
  assert.match(await notice.innerText(), /Asking, running SQL, replay, diagnostics and labeling work\./);
  await notice.locator('.monaco-button', { hasText: 'Trust Folder…' }).waitFor({ timeout: 10_000 });
  await ed.screenshot('trust-notice');
  await clearNotifications();
});

const REFUSED: [title: string, message: RegExp][] = [
  [
    'Quarry: Train a Model…',
    /Quarry: training is off in an untrusted workspace: \.quarry\/targets\.json could run commands on this machine/,
  ],
  ['Quarry: Load Checkpoint…', /Quarry: loading checkpoints is off in an untrusted workspace: .*model server/],
  ['Quarry: Unload Checkpoint…', /Quarry: unloading checkpoints is off in an untrusted workspace: .*models\.json/],
  [
    'Quarry: Check Training Environment',
    /Quarry: checking the training environment is off in an untrusted workspace: .*Python interpreter/,
  ],
];

for (const [title, message] of REFUSED) {
  test(`${title} says why it is off and offers Trust Folder…`, async () => {
    await ed.runCommand(title);
    const item = await ed.notification(message);
    await item.locator('.monaco-button', { hasText: 'Trust Folder…' }).waitFor({ timeout: 10_000 });
    // Refused before anything was asked: no wizard or picker opened.
    assert.equal(await ed.page.locator('.quick-input-widget').isVisible(), false, 'no quick input after the refusal');
    assert.equal(existsSync(marker), false, "the workspace's planted Python never ran");
    if (title.includes('Train')) await ed.screenshot('trust-refused-train');
    await clearNotifications();
  });
}

test('the Training Jobs view lists the planted job as recorded, without asking its target', async () => {
  const view = await ed.openActivityView('Quarry');
  const row = view.locator('.monaco-list-row', { hasText: JOB }).first();
  await row.waitFor({ timeout: 60_000 });
  await view
    .locator('.monaco-list-row', { hasText: /running · local · .*not followed: folder untrusted/ })
    .first()
    .waitFor({ timeout: 30_000 });
  assert.equal(jobStatus(), 'running', 'job.json is as written: the local target was never asked');
  await ed.screenshot('trust-jobs-view');
});

test('Ask with the bundled ONNX model works: the Ask panel answers and the trajectory is saved', async () => {
  await ed.runCommand('Quarry: Ask a Question…');
  await ed.answer('bookshop');
  await ed.page
    .locator('.quick-input-widget .quick-input-title', { hasText: 'Quarry: Ask about samples/bookshop.sqlite' })
    .waitFor({ timeout: 15_000 });
  await ed.answer(QUESTION);
  const panel = await ed.webview('Q1.', 60_000);
  await panel.locator('#x0-status', { hasText: /turns/ }).waitFor({ timeout: 180_000 });
  const store = join(ed.workspace, DEFAULT_TRAJECTORY_STORE);
  let saved: { question: string; model: { spec: string } } | undefined;
  for (let i = 0; i < 300 && !saved; i++) {
    const lines = existsSync(store) ? readFileSync(store, 'utf8').trim().split('\n').filter(Boolean) : [];
    if (lines.length) saved = JSON.parse(lines[lines.length - 1]) as never;
    else await ed.page.waitForTimeout(200);
  }
  assert.ok(saved, `no trajectory in ${store}`);
  assert.match(saved.model.spec, /^onnx:.*tiny-sql$/);
  await ed.screenshot('trust-ask');
});

test('Run Query works: Ctrl+Enter in a .sql file bound to a database shows the result', async () => {
  await ed.runCommand('Refresh Explorer');
  await ed.runCommand('View: Show Explorer');
  const file = ed.page.locator('.part.sidebar .monaco-list-row', { hasText: 'doctors.sql' }).first();
  await file.waitFor({ timeout: 30_000 });
  await file.dblclick();
  const lines = ed.page.locator('.editor-instance .monaco-editor .view-lines').first();
  await lines.getByText('-- doctors').waitFor({ timeout: 30_000 });
  await ed.page.locator('.statusbar-item', { hasText: 'Choose Database' }).first().click();
  await ed.pick(/clinic\.sqlite/);
  await lines.getByText('-- doctors').click();
  await ed.page.keyboard.press('ArrowDown');
  await ed.page.keyboard.press('Control+Enter');
  const app: Frame = await ed.webview('Query Results', 60_000);
  const cell = app.locator('#results-grid tbody tr').first().locator('td').first();
  await cell.waitFor({ timeout: 30_000 });
  assert.equal(await cell.innerText(), String(doctors));
  await ed.screenshot('trust-run-query');
});

test('Replay works: the workspace store opens with the asked trajectory, not scored: it has no gold SQL', async () => {
  await ed.runCommand('Quarry: Open Trajectory Replay…');
  await ed.pick(/Workspace store/);
  const panel = await ed.webview(/Replay: .*asked\.jsonl/, 60_000);
  await panel.locator('#r-counts', { hasText: /^1 of 1 trajector/ }).waitFor({ timeout: 30_000 });
  // An asked question has no gold SQL: the header says so rather than "1/1 scored" (issue 32, item 4).
  await panel.locator('#r-score-status', { hasText: '0/1 scored — no gold SQL' }).waitFor({ timeout: 60_000 });
  await ed.screenshot('trust-replay');
});

test('Labeling works: the queue opens on the asked trajectory and a verdict is saved', async () => {
  await ed.runCommand('Quarry: Label Trajectories…');
  await ed.pick(/Workspace store/);
  const app = await ed.webview('labeled', 60_000);
  await app.locator('#l-question', { hasText: QUESTION }).first().waitFor({ timeout: 30_000 });
  await app.locator('#l-progress', { hasText: '0 / 1 labeled' }).first().waitFor({ timeout: 30_000 });
  await app.locator('#l-question').click();
  await ed.page.keyboard.press('2');
  await app.locator('#l-progress', { hasText: '1 / 1 labeled' }).first().waitFor({ timeout: 30_000 });
  await ed.screenshot('trust-labeling');
});

test('Trust Folder… from a refusal trusts the folder: with no reload the job is followed, training opens', async () => {
  await ed.runCommand('Quarry: Train a Model…');
  const item = await ed.notification(/Quarry: training is off in an untrusted workspace/);
  await item.locator('.monaco-button', { hasText: 'Trust Folder…' }).click();
  const trustButton = ed.page.locator('[aria-label^="Trust,"] .monaco-button').first();
  await trustButton.waitFor({ timeout: 30_000 });
  await ed.screenshot('trust-manage');
  await trustButton.click();
  await ed.page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).waitFor({ state: 'detached' });
  // The monitor asks the job's target now: its process is gone, so the job is lost.
  for (let i = 0; i < 300 && jobStatus() === 'running'; i++) await ed.page.waitForTimeout(200);
  assert.equal(jobStatus(), 'lost');
  await ed.runCommand('Quarry: Train a Model…');
  await ed.page
    .locator('.quick-input-widget .quick-input-title', { hasText: /Quarry: Train a Model \(1\/7\)/ })
    .waitFor({ timeout: 30_000 });
  await ed.screenshot('trust-trusted-train');
  await ed.page.keyboard.press('Escape');
  assert.equal(existsSync(marker), false, "the workspace's planted Python never ran");
});
