// A new user's path on a CPU-only machine, in the browser, with no detour: the sample workspace (with a small
// Spider-style question file about its clinic database, as a user brings one) → "Quarry: Train a Model…" answered
// with the defaults it offers at every step (the recipe the bundled tiny model speaks, the bundled tiny model, SFT
// data made in the wizard from the question file, TRL, this machine, CPU only, a few steps, Submit) → the job
// succeeds on the CPU → Load Checkpoint… (ONNX, Use It) → Ask a Question… answered by the trained model → Evaluate
// Checkpoint… (the question file offered, no dialog) → Compare Checkpoints… with the bundled model (loaded and
// evaluated from the CLI beforehand: the baseline a user compares with). Screenshots at each step in
// test-artifacts/screenshots/new-user-*.png. Needs the project's Python (.venv): without it the spec skips.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { JobStore } from '../../src/app/jobs/store';
import { DEFAULT_TRAJECTORY_STORE } from '../../src/app/trajectoryStore';
import { ModelRegistry } from '../../src/core/training/modelRegistry';
import { untilRemote } from '../services/services';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const repoRoot = join(__dirname, '..', '..', '..');
const python = join(repoRoot, '.venv', 'bin', 'python');
const noPython = existsSync(python) ? false : `no project Python at ${python} (npm run setup:python)`;
const BASE = 'tiny-base';

const QUESTIONS = [
  { question: 'How many doctors are there?', query: 'SELECT count(*) FROM doctor' },
  { question: 'List the names of all patients.', query: 'SELECT name FROM patient' },
  { question: 'How many appointments are there?', query: 'SELECT count(*) FROM appointment' },
  { question: 'Which patients live in Porto?', query: "SELECT name FROM patient WHERE city = 'Porto'" },
];

let ed: Editor;
let store: JobStore;
let jobId = '';
let trained = '';

function quarry(args: string[]): string {
  return execFileSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], {
    cwd: ed.workspace,
    encoding: 'utf8',
    timeout: 600_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

before(async () => {
  if (noPython) return;
  ed = await openEditor({
    name: 'new-user',
    settings: { 'quarry.python': python },
    viewport: { width: 1400, height: 950 },
  });
  store = new JobStore(ed.workspace);
  // The question file a user brings: Spider's layout (dev.json beside database/<db_id>/<db_id>.sqlite).
  const dir = join(ed.workspace, 'clinic-questions');
  mkdirSync(join(dir, 'database', 'clinic'), { recursive: true });
  copyFileSync(join(ed.workspace, 'data', 'clinic.sqlite'), join(dir, 'database', 'clinic', 'clinic.sqlite'));
  writeFileSync(join(dir, 'dev.json'), JSON.stringify(QUESTIONS.map((q) => ({ db_id: 'clinic', ...q }))));
  // The baseline to compare with: the bundled tiny model, loaded and evaluated on the same questions.
  quarry(['checkpoints', 'load', join(repoRoot, 'media', 'models', 'tiny-sql'), '--as', BASE, '--python', python]);
  quarry([
    ...['checkpoints', 'eval', BASE, '--dataset', `spider:${join(dir, 'dev.json')}`],
    ...['--db-dir', join(dir, 'database'), '--protocol', 'skyrl'],
  ]);
});
after(async () => {
  await ed?.close();
});
screenshotAfterEach('new-user', () => ed);

const title = () => ed.page.locator('.quick-input-widget .quick-input-title');

/** Waits for the wizard's step whose title has `text`, takes its screenshot, and takes what it offers first. */
async function takeDefault(text: string, shot: string, timeout = 120_000): Promise<string> {
  await title().filter({ hasText: text }).waitFor({ timeout });
  const first = ed.page.locator('.quick-input-list .monaco-list-row').first();
  const input = ed.page.locator('.quick-input-widget .quick-input-box input');
  const offered = (await first.isVisible().catch(() => false)) ? await first.innerText() : await input.inputValue();
  await ed.screenshot(`new-user-${shot}`);
  await ed.page.keyboard.press('Enter');
  return offered.replace(/\s+/g, ' ').trim();
}

test('Train a Model… with the defaults it offers: tiny model, data made in the wizard, CPU, a few steps', async (t) => {
  if (noPython) return t.skip(noPython);
  await ed.runCommand('Quarry: Train a Model…');
  const recipe = await takeDefault('(1/7) — recipe', 'recipe');
  assert.match(recipe, /^skyrl-sql/, 'the recipe the bundled tiny model speaks');
  assert.match(await takeDefault('(2/7) — base model', 'base-model'), /tiny-sql \(bundled\)/);
  assert.match(
    await takeDefault('(3/7) — data', 'data'),
    /Make SFT data from clinic-questions\/dev\.json \(4 questions\)/,
  );
  assert.match(await takeDefault('(4/7) — engine', 'engine', 180_000), /^trl/);
  assert.match(await takeDefault('(5/7) — target', 'target'), /^local/);
  assert.match(await takeDefault('(6/7) — resources', 'resources', 180_000), /CPU only/);
  assert.equal(await takeDefault('steps', 'steps'), '8', 'a few steps on the CPU');
  // The review: Submit names the job once with its target; the whole command line is an item of its own.
  await title().filter({ hasText: '(7/7) — review' }).waitFor({ timeout: 120_000 });
  const rows = ed.page.locator('.quick-input-list .monaco-list-row');
  const submit = (await rows.first().innerText()).replace(/\s+/g, ' ');
  assert.doesNotMatch(submit, /on local on local/);
  assert.match(submit, /tiny-sql · sft-clinic-questions-[\d-]+ · trl SFT · .* on local/);
  const line = (await rows.filter({ hasText: 'Command line' }).first().innerText()).replace(/\s+/g, ' ');
  assert.match(line, /-m quarry_trainer\.train\.sft --model \S+tiny-sql --data \S+ --out out .*--max-steps 8 /);
  assert.match(line, /--save-steps 8 --cpu$/, 'the whole line, to its last flag');
  await ed.screenshot('new-user-review');
  await ed.page.keyboard.press('Enter');
  await untilRemote('the job to be submitted', () => store.list().length > 0);
  const job = store.list()[0];
  jobId = job.id;
  assert.equal(job.target, 'local');
  assert.ok(job.command.includes('--cpu'));
  // The data made in the wizard is a `quarry data` folder under .quarry/data.
  const data = job.command[job.command.indexOf('--data') + 1];
  assert.match(data, /\.quarry\/data\/sft-clinic-questions-/);
  const doc = JSON.parse(readFileSync(join(data, 'data.json'), 'utf8'));
  assert.deepEqual([doc.kind, doc.counts.written], ['sft', QUESTIONS.length]);
});

test('the job succeeds on the CPU; its panel shows stdout and stderr', async (t) => {
  if (!jobId) return t.skip('no job was submitted');
  await untilRemote('the job to end', () => ['succeeded', 'failed', 'lost'].includes(store.get(jobId).status), 900_000);
  const job = store.get(jobId);
  const stderr = existsSync(join(store.dir(jobId), 'stderr.log'))
    ? readFileSync(join(store.dir(jobId), 'stderr.log'), 'utf8').slice(-2000)
    : '';
  assert.equal(job.status, 'succeeded', stderr);
  const app = await ed.webview(job.name, 120_000, 'h1');
  await app.locator('#job-status', { hasText: /succeeded/ }).waitFor({ timeout: 120_000 });
  await app.locator('#log [data-stream="stdout"]').waitFor({ timeout: 30_000 });
  await app.locator('#log [data-stream="stderr"]').waitFor({ timeout: 30_000 });
  await ed.screenshot('new-user-job-succeeded');
});

test('Load Checkpoint… then Ask a Question… answered by the trained model', async (t) => {
  if (!jobId || store.get(jobId).status !== 'succeeded') return t.skip('the job did not succeed');
  const name = store.get(jobId).name;
  await ed.runCommand('Quarry: Load Checkpoint…');
  await ed.pick(`${name} · step 8`);
  await ed.pick('Export to ONNX');
  const done = await ed.notification(/Quarry: loaded /, 300_000);
  assert.match(await done.innerText(), /parity ok/);
  await ed.screenshot('new-user-loaded');
  await done.locator('.monaco-button', { hasText: 'Use It' }).click();
  const entry = new ModelRegistry(ed.workspace).list().find((m) => m.provenance.jobId === jobId);
  assert.ok(entry, 'the checkpoint is registered');
  trained = entry.name;
  await ed.page.keyboard.press('Escape');
  await ed.page.locator('.part.statusbar', { hasText: `onnx · ${trained}` }).waitFor({ timeout: 30_000 });
  await ed.runCommand('Quarry: Ask a Question…');
  // The sample's own clinic database (the question file's copy is listed too).
  await ed.page
    .locator('.quick-input-list .monaco-list-row', { hasText: 'clinic.sqlite' })
    .filter({ hasNotText: 'clinic-questions' })
    .first()
    .click({ timeout: 30_000 });
  await title().filter({ hasText: 'Quarry: Ask about data/clinic.sqlite' }).waitFor({ timeout: 15_000 });
  await ed.answer(QUESTIONS[0].question);
  const panel = await ed.webview('Q1.');
  await panel.locator('#x0-status', { hasText: /turns/ }).waitFor({ timeout: 180_000 });
  // The episode ends and is saved with the model that answered: the trained checkpoint, named on the card.
  const storeFile = join(ed.workspace, DEFAULT_TRAJECTORY_STORE);
  const answeredBy = () =>
    existsSync(storeFile)
      ? readFileSync(storeFile, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { model: { spec: string } }).model.spec)
      : [];
  await untilRemote('the answer to be saved', () => answeredBy().length > 0, 180_000);
  assert.deepEqual(answeredBy(), [`onnx:${join(ed.workspace, '.quarry', 'models', trained)}`]);
  assert.match(await panel.locator('body').innerText(), new RegExp(trained.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  await ed.screenshot('new-user-asked');
});

test('Evaluate Checkpoint… (the question file offered) then Compare Checkpoints… with the bundled model', async (t) => {
  if (!trained) return t.skip('no trained checkpoint was loaded');
  await ed.runCommand('Quarry: Evaluate Checkpoint…');
  await ed.pick(trained);
  await title().filter({ hasText: 'on which questions' }).waitFor({ timeout: 30_000 });
  await ed.screenshot('new-user-evaluate-on');
  await ed.pick(/clinic-questions\/dev\.json \(4 questions\)/);
  await ed.pick('skyrl');
  await ed.notification(new RegExp(`${trained}: greedy EX [\\d.]+% of 4`), 600_000);
  await ed.runCommand('Quarry: Compare Checkpoints…');
  await ed.pick(BASE);
  await ed.pick(trained);
  await ed.page.keyboard.press('Enter');
  const app = await ed.webview('Compare checkpoints', 60_000);
  const table = app.locator('#ex-table');
  await table.waitFor({ timeout: 60_000 });
  for (const name of [BASE, trained])
    assert.match(
      await table.locator(`tr[data-level="all"] td[data-model="${name}"][data-k="greedy"]`).innerText(),
      /^\d+\.\d$/,
    );
  await ed.screenshot('new-user-compare');
});
