// Training from the palette on real job targets: the packaged extension in a fresh code-server, this machine (`local`),
// and the services scripts/services/start.sh runs on loopback (an OpenSSH server, a single-node Slurm cluster, a Ray
// head; see test/services/services.ts). "Quarry: Train a Model…" is answered step by step in the browser (recipe, the
// tiny model, a `quarry data sft` folder, TRL, the target, CPU only, a few steps, Submit) once per target, and each
// job's panel opens on it. The window is reloaded while they run: each job is listed again and followed (a running one
// shows its step again), and the last panel opened comes back and its loss chart keeps growing. Then each job's panel
// (Quarry: Show Job) charts it as it runs and the Training Jobs view gives its step; the local, ssh and Slurm jobs
// succeed; the long Ray one is cancelled with "Quarry: Cancel Job"; `quarry jobs list` (node dist/cli.js) shows the
// same jobs in the same states, and the metrics pulled from the ssh host and the Slurm cluster are the files there,
// each line once. Targets whose service is not running are skipped, each naming what is missing; without services.json
// all but `local` are skipped (CI starts the services: .ci/run). Screenshots in
// test-artifacts/screenshots/train-targets-*.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Frame } from 'playwright-core';
import { JobStore } from '../../src/app/jobs';
import type { JobRecord } from '../../src/core/training/jobs/job';
import { services, sftFixture, targetsFor, untilRemote, type Services } from '../services/services';
import { openEditor, screenshotAfterEach, type Editor } from './harness';

const repoRoot = join(__dirname, '..', '..', '..');
const python = join(repoRoot, '.venv', 'bin', 'python');
const tinyModel = join(repoRoot, 'media', 'models', 'tiny-sql');
const RECIPE = 'sql-trail';

/** The targets this spec drives, the steps each job runs, and which one is cancelled mid-run. */
const PLAN: Array<{ target: 'local' | 'box' | 'hpc' | 'ray'; what: string; steps: number }> = [
  { target: 'local', what: 'this machine', steps: 20 },
  { target: 'box', what: 'the loopback ssh host', steps: 20 },
  { target: 'hpc', what: 'the loopback Slurm cluster', steps: 20 },
  // Cancelled by the test long before it could end (a tiny-model step takes well under a second on a quiet CPU).
  { target: 'ray', what: 'the local Ray head', steps: 100_000 },
];
const CANCELLED = 'ray';

const { svc, skip: noServices } = services();

function sshAnswers(s: Services): string | null {
  const r = spawnSync('ssh', ['-F', s.ssh.config, '-o', 'BatchMode=yes', s.ssh.host, 'true'], { timeout: 30_000 });
  return r.status === 0 ? null : `sshd on 127.0.0.1:${s.ssh.port} does not answer (${String(r.stderr).trim()})`;
}

function slurmAnswers(): string | null {
  const r = spawnSync('sinfo', ['-h', '-o', '%T'], { timeout: 30_000, encoding: 'utf8' });
  if (r.error) return `sinfo cannot run (${r.error.message})`;
  return r.status === 0 && /idle|mixed|alloc/.test(r.stdout) ? null : `slurm is not up (${r.stderr.trim()})`;
}

function rayAnswers(s: Services): Promise<string | null> {
  return new Promise((resolve) => {
    const req = request(`${s.ray.address}/api/version`, { timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? null : `the Ray dashboard at ${s.ray.address} answered ${res.statusCode}`);
    });
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', (e) => resolve(`the Ray dashboard at ${s.ray.address} does not answer (${e.message})`));
    req.end();
  });
}

/** Why each target cannot run here, or false: all skip without the project's Python, all but `local` without the
 * services. */
const missing: Record<string, string | false> = {};
let ed: Editor;
let store: JobStore;
const launched: Record<string, string> = {};

before(async () => {
  if (!existsSync(python)) {
    for (const p of PLAN) missing[p.target] = `no ${python}: run npm run setup:python`;
    return;
  }
  // `local` needs only the project's Python; the others need the services.
  missing.local = false;
  missing.box = noServices || sshAnswers(svc!) || false;
  missing.hpc = noServices || slurmAnswers() || false;
  missing.ray = noServices || (await rayAnswers(svc!)) || false;
  for (const p of PLAN) {
    if (missing[p.target]) process.stderr.write(`train-targets: skipping ${p.what}: ${missing[p.target]}\n`);
  }
  ed = await openEditor({
    name: 'train-targets',
    settings: { 'quarry.python': python },
    viewport: { width: 1400, height: 950 },
  });
  mkdirSync(join(ed.workspace, '.quarry'), { recursive: true });
  if (svc) writeFileSync(join(ed.workspace, '.quarry', 'targets.json'), JSON.stringify(targetsFor(svc), null, 2));
  // A `quarry data sft` folder the wizard offers: its data.json and four conversations.
  const data = join(ed.workspace, 'train-data');
  mkdirSync(data, { recursive: true });
  sftFixture(data);
  writeFileSync(
    join(data, 'data.json'),
    JSON.stringify({ schema: 'quarry.data/1', kind: 'sft', counts: { written: 4 } }, null, 2),
  );
  store = new JobStore(ed.workspace);
});
after(async () => {
  // A job this spec left running (a failed test) is stopped through the CLI, the way a user would.
  if (ed) {
    for (const id of Object.values(launched)) {
      const job = store.get(id);
      if (job.status === 'running') quarry(['jobs', 'cancel', id, '--grace-s', '2']);
    }
  }
  await ed?.close();
});
screenshotAfterEach('train-targets', () => ed);

function quarry(args: string[]): string {
  return execFileSync(process.execPath, [join(repoRoot, 'dist', 'cli.js'), ...args], {
    cwd: ed.workspace,
    encoding: 'utf8',
    timeout: 300_000,
  });
}

/** The name the wizard gave the target's job (model, data, engine stage, time: the target is not in it). */
function jobName(target: string): string {
  const job = store.list().find((j) => j.target === target && j.engine === 'trl');
  assert.ok(job, `a job on ${target}`);
  return job.name;
}

/** Waits for the quick input whose title contains `title` (an answer typed before it shows goes to the last one). */
async function inputTitled(title: string): Promise<void> {
  await ed.page.locator('.quick-input-widget .quick-input-title', { hasText: title }).waitFor({ timeout: 30_000 });
}

/** The points the loss chart of a job panel draws now. */
async function lossPoints(app: Frame): Promise<number> {
  const plot = app.locator('figure[data-metric="loss"] canvas');
  await plot.waitFor({ timeout: 300_000 });
  return Number(await plot.getAttribute('data-points'));
}

/** The step of the last point the loss chart draws (the chart thins a long run to a few hundred points). */
async function lossLastStep(app: Frame): Promise<number> {
  const plot = app.locator('figure[data-metric="loss"] canvas');
  await plot.waitFor({ timeout: 300_000 });
  return Number(await plot.getAttribute('data-last-step'));
}

/**
 * Waits until the loss chart draws a later step than it does now (the panel follows the running job), or draws the
 * job's last step `steps` (it ended between the store's read and the panel's first draw).
 */
async function lossGrows(app: Frame, steps: number): Promise<[number, number]> {
  const first = await lossLastStep(app);
  await app.waitForFunction(
    ([n, total]) => {
      const last = Number(document.querySelector('figure[data-metric="loss"] canvas')?.getAttribute('data-last-step'));
      return last > n || last >= total;
    },
    [first, steps] as const,
    { timeout: 300_000 },
  );
  return [first, await lossLastStep(app)];
}

/** Show Job from the palette, picking `name` (the harness opens the pick again if a new webview's focus closed it). */
async function showJob(name: string): Promise<void> {
  await ed.runCommand('Quarry: Show Job');
  await ed.pick(name);
}

/** Waits until the Training Jobs view shows the job's row matching `re` (on its name and description). */
async function rowShows(name: string, re: RegExp, timeout = 300_000): Promise<string> {
  await ed.openActivityView('Quarry');
  const handle = await ed.page.waitForFunction(
    ([n, src]) => {
      const rows = Array.from(document.querySelectorAll('.monaco-list-row')) as HTMLElement[];
      const row = rows.find((r) => r.innerText.includes(n) && new RegExp(src, 's').test(r.innerText));
      return row ? row.innerText : null;
    },
    [name, re.source] as const,
    { timeout },
  );
  return String(await handle.jsonValue());
}

for (const p of PLAN) {
  test(`Train a Model… on ${p.what} (${p.target}): answered in the palette, submitted, its panel opens`, async (t) => {
    if (missing[p.target]) return t.skip(`${p.what} is missing: ${missing[p.target]}`);
    await ed.runCommand('Quarry: Train a Model…');
    await ed.pick(RECIPE);
    await ed.pick(/Another model id/);
    await inputTitled('Base model (hub id)');
    await ed.answer(tinyModel);
    await ed.pick(/^train-data \(sft, 4 rows\)$/);
    await ed.pick('trl');
    await ed.pick(p.target);
    await ed.pick('CPU only');
    await inputTitled('steps');
    await ed.answer(String(p.steps));
    await ed.pick(/Submit/);
    // The target checks what it needs, the launch is staged and started, then the panel opens (slow on a busy machine:
    // the next palette command must not start before it has).
    await untilRemote(`the ${p.target} job to be submitted`, () => store.list().some((j) => j.target === p.target));
    const app = await ed.webview(jobName(p.target), 300_000, 'h1');
    const job = store.list().find((j) => j.name === jobName(p.target));
    assert.ok(job, `job.json for ${jobName(p.target)}`);
    launched[p.target] = job.id;
    assert.equal(job.target, p.target);
    assert.equal(job.engine, 'trl');
    assert.equal(job.command[job.command.indexOf('--max-steps') + 1], String(p.steps));
    assert.match(await app.locator('#job-status').innerText(), /running/);
  });
}

test('the window reloaded while the jobs run: each is listed again and followed anew', async (t) => {
  const running = PLAN.filter((p) => launched[p.target] && store.get(launched[p.target]).status === 'running');
  if (running.length === 0) return t.skip('no job is running (see the skips above)');
  t.diagnostic(`running at the reload: ${running.map((p) => p.target).join(', ')}`);
  await ed.reloadWindow();
  // Each job is listed again and followed anew: a running one shows its step again.
  for (const p of PLAN.filter((x) => launched[x.target])) {
    const wasRunning = running.includes(p);
    const row = await rowShows(
      jobName(p.target),
      new RegExp(
        wasRunning ? `(running · ${p.target} · .* · step \\d+|succeeded · ${p.target})` : `succeeded · ${p.target}`,
      ),
    );
    t.diagnostic(`after the reload: ${row.replace(/\s+/g, ' ')}`);
  }
  // That a job panel itself comes back is jobs.e2e.ts's test; here each panel is opened again with Show Job below.
  await ed.screenshot('train-targets-after-reload');
});

for (const p of PLAN) {
  test(`the ${p.target} job after the reload: Show Job charts it as it runs, the view gives its step`, async (t) => {
    if (!launched[p.target]) return t.skip(`no ${p.target} job was launched`);
    await showJob(jobName(p.target));
    const app = await ed.webview(jobName(p.target), 300_000, 'h1');
    const first = await lossPoints(app);
    if (store.get(launched[p.target]).status === 'succeeded') {
      // A fast machine finished it already: its chart holds every step.
      // The panel pulls the rest of its metrics as it opens: wait for every step rather than read the first draw.
      const all = await app
        .waitForFunction(
          (n) => Number(document.querySelector('figure[data-metric="loss"] canvas')?.getAttribute('data-points')) >= n,
          p.steps,
          { timeout: 120_000 },
        )
        .then(
          () => true,
          () => false,
        );
      t.diagnostic(`${p.target} had finished: ${first} loss points at first`);
      assert.ok(all, `${await lossPoints(app)} loss points for ${p.steps} steps`);
    } else {
      const [before, after] = await lossGrows(app, p.steps);
      assert.ok(
        after > before || after >= p.steps,
        `the loss chart went from step ${before} to ${after} of ${p.steps} on ${p.target}`,
      );
      const row = await rowShows(jobName(p.target), new RegExp(`(running|succeeded) · ${p.target} · .* · step \\d+`));
      t.diagnostic(`Jobs view: ${row.replace(/\s+/g, ' ')}`);
    }
    await ed.screenshot(`train-targets-${p.target}`);
  });
}

test('the jobs that were running finish, followed by the reloaded window', async (t) => {
  const ending = PLAN.filter((x) => launched[x.target] && x.target !== CANCELLED);
  if (ending.length === 0) return t.skip('no local, ssh or Slurm job was launched');
  for (const p of ending) {
    const row = await rowShows(
      jobName(p.target),
      new RegExp(`succeeded · ${p.target} · .* · step ${p.steps}`),
      1_500_000,
    );
    t.diagnostic(`ended: ${row.replace(/\s+/g, ' ')}`);
  }
});

test(`Cancel Job from the palette stops the ${CANCELLED} job`, async (t) => {
  if (!launched[CANCELLED]) return t.skip(`no ${CANCELLED} job was launched`);
  await ed.runCommand('Quarry: Cancel Job');
  await ed.pick(jobName(CANCELLED));
  await rowShows(jobName(CANCELLED), new RegExp(`cancelled · ${CANCELLED}`), 120_000);
  assert.equal(store.get(launched[CANCELLED]).status, 'cancelled');
  await ed.screenshot('train-targets-cancelled');
});

test('quarry jobs list shows the same jobs in the same states', async (t) => {
  const ids = Object.values(launched);
  if (ids.length === 0) return t.skip('no job was launched');
  const listed = JSON.parse(quarry(['jobs', 'list', '--json'])) as JobRecord[];
  const want = Object.fromEntries(
    PLAN.filter((p) => launched[p.target]).map((p) => [
      launched[p.target],
      { target: p.target, status: p.target === CANCELLED ? 'cancelled' : 'succeeded' },
    ]),
  );
  assert.deepEqual(
    Object.fromEntries(listed.map((j) => [j.id, { target: j.target, status: j.status }])),
    want,
    'the CLI lists the jobs the editor launched, with their states',
  );
  // The same states as the Training Jobs view shows.
  for (const j of listed) await rowShows(j.name, new RegExp(`${j.status} · ${j.target}`), 30_000);
  // What the ssh and Slurm jobs wrote on their side came back whole, each line once (the panel, the monitor and the
  // CLI all pulled them, some at the same time).
  for (const p of PLAN.filter((x) => launched[x.target] && (x.target === 'box' || x.target === 'hpc'))) {
    const job = store.get(launched[p.target]);
    const there = readFileSync(join(job.remote.dir!, 'out', 'metrics.jsonl'), 'utf8');
    assert.equal(readFileSync(join(store.dir(job.id), 'out', 'metrics.jsonl'), 'utf8'), there, `${p.target} metrics`);
  }
  const text = quarry(['jobs', 'list']);
  t.diagnostic(text.trim());
  for (const id of ids) assert.match(text, new RegExp(id));
});
