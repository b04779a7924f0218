// Jobs on the `local` target with real processes: a job outlives the CLI that started it, records its exit code, is
// seen by `quarry jobs list` from another process, is followed with `logs --follow`, and is cancelled with SIGTERM
// (which a trainer can catch to save first) then SIGKILL; a pid reused by another program is never taken for the job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { JobStore, cancelJob, readLog, refreshJob, submitJob } from '../../../src/app/jobs';
import { jobSpecProblem } from '../../../src/core/training/jobs/job';
import { main } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';

const node = process.execPath;
const until = async (what: string, f: () => boolean | Promise<boolean>, ms = 20_000) => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
};
const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function cli(cwd: string, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(['jobs', ...argv], {
    stdout: new Writable({
      write(c, _e, cb) {
        out += String(c);
        cb();
      },
    }),
    stderr: new Writable({
      write(c, _e, cb) {
        err += String(c);
        cb();
      },
    }),
    cwd,
  });
  return { code, out, err };
}

test('a job that succeeds and one that fails: exit codes, logs, statuses', async () => {
  const ws = tempDir();
  const store = new JobStore(ws);
  const ok = await submitJob(store, {
    target: 'local',
    name: 'ok',
    command: [
      node,
      '-e',
      'console.log("step 1"); console.error("warn"); require("fs").writeFileSync("out/metrics.jsonl", ' +
        'JSON.stringify({step: 1}) + "\\n")',
    ],
  });
  const bad = await submitJob(store, {
    target: 'local',
    command: [node, '-e', 'console.error("boom: no GPU"); process.exit(3)'],
  });
  await until(
    'both jobs to end',
    async () =>
      (await refreshJob(store, ok.id)).status !== 'running' && (await refreshJob(store, bad.id)).status !== 'running',
  );
  const a = store.get(ok.id);
  assert.deepEqual([a.status, a.exitCode], ['succeeded', 0]);
  assert.equal(readLog(store, ok.id, 'stdout').text, 'step 1\n');
  assert.equal(readLog(store, ok.id, 'stderr').text, 'warn\n');
  assert.ok(existsSync(join(store.dir(ok.id), 'out', 'metrics.jsonl')), 'the job writes into its own out/');
  const b = store.get(bad.id);
  assert.deepEqual([b.status, b.exitCode], ['failed', 3]);
  assert.match(b.reason ?? '', /exited with code 3: boom: no GPU/);
  const listed = await cli(ws, 'list', '--json');
  assert.deepEqual((JSON.parse(listed.out) as Array<{ id: string }>).map((j) => j.id).sort(), [ok.id, bad.id].sort());
  assert.equal((await cli(ws, 'status', bad.id)).code, 1);
});

test('a job outlives the CLI process that submitted it, and logs --follow streams it to the end', async () => {
  const ws = tempDir();
  const spec = join(ws, 'job.json');
  const script =
    'let i = 0; const t = setInterval(() => { console.log("line " + (++i)); if (i === 5) { ' +
    'clearInterval(t); } }, 200);';
  writeFileSync(spec, JSON.stringify({ target: 'local', name: 'ticker', command: [node, '-e', script] }));
  const cliJs = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');
  const submitted = spawnSync(node, [cliJs, 'jobs', 'submit', '--spec', spec, '--json'], { cwd: ws, encoding: 'utf8' });
  assert.equal(submitted.status, 0, submitted.stderr);
  const job = JSON.parse(submitted.stdout) as { id: string; remote: { pid: number } };
  assert.ok(groupAlive(job.remote.pid), 'still running after the submitting CLI exited');
  const followed = await cli(ws, 'logs', job.id, '--follow');
  assert.equal(followed.code, 0);
  assert.equal(followed.out, 'line 1\nline 2\nline 3\nline 4\nline 5\n');
  assert.match(followed.err, /succeeded \(exit 0\)/);
});

test('cancel: SIGTERM reaches the command (which may save first), then SIGKILL for one that ignores it', async () => {
  const ws = tempDir();
  const store = new JobStore(ws);
  const polite = await submitJob(store, {
    target: 'local',
    command: [
      node,
      '-e',
      'process.on("SIGTERM", () => { require("fs").writeFileSync("out/saved", "yes"); process.exit(0); ' +
        '}); console.log("ready"); setInterval(() => {}, 1000);',
    ],
  });
  await until('the job to start', () => readLog(store, polite.id, 'stdout').text.includes('ready'));
  const done = await cancelJob(store, polite.id, 5000);
  assert.equal(done.status, 'cancelled');
  assert.equal(
    readFileSync(join(store.dir(polite.id), 'out', 'saved'), 'utf8'),
    'yes',
    'the command saved before it stopped',
  );
  assert.ok(!groupAlive(polite.remote.pid!));

  const stubborn = await submitJob(store, {
    target: 'local',
    command: [node, '-e', 'process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000);'],
  });
  await until('the job to start', () => readLog(store, stubborn.id, 'stdout').text.includes('ready'));
  const t0 = Date.now();
  const killed = await cancelJob(store, stubborn.id, 300);
  assert.equal(killed.status, 'cancelled');
  assert.ok(!groupAlive(stubborn.remote.pid!), 'SIGKILL after the grace period');
  assert.ok(Date.now() - t0 < 10_000);
  assert.equal((await refreshJob(store, stubborn.id)).status, 'cancelled', 'stays cancelled');
});

test('a job whose processes vanished without an exit code is lost, and a reused pid is not the job', async () => {
  const ws = tempDir();
  const store = new JobStore(ws);
  const job = await submitJob(store, { target: 'local', command: [node, '-e', 'setInterval(() => {}, 1000)'] });
  process.kill(-job.remote.pid!, 'SIGKILL');
  await until('the group to die', () => !groupAlive(job.remote.pid!));
  const lost = await refreshJob(store, job.id);
  assert.equal(lost.status, 'lost');
  assert.match(lost.reason ?? '', /without recording an exit code/);
  // A record naming a live pid (this test process's group) with another start time is not running.
  const other = await submitJob(store, { target: 'local', command: [node, '-e', 'process.exit(0)'] });
  const rec = store.get(other.id);
  await until('it to end', async () => (await refreshJob(store, other.id)).status === 'succeeded');
  rec.status = 'running';
  rec.exitCode = null;
  rec.remote = { pid: process.pid, procStart: '1' };
  store.save(rec);
  writeFileSync(join(store.dir(other.id), 'exit_code'), '');
  assert.notEqual((await refreshJob(store, other.id)).status, 'running');
});

test('bad specs are refused with the reason; unknown targets are named', async () => {
  assert.equal(
    jobSpecProblem({ target: 'local', command: [] }),
    '"command" must be a non-empty list of strings (the program and its arguments)',
  );
  assert.equal(jobSpecProblem({ command: ['x'] }), '"target" must name a target (e.g. "local")');
  assert.equal(jobSpecProblem({ target: 'local', command: ['x'], env: { A: 1 } }), '"env.A" must be a string');
  const store = new JobStore(tempDir());
  await assert.rejects(submitJob(store, { target: 'mars', command: ['x'] }), /unknown target 'mars' \(known: local\)/);
  const ws = tempDir();
  writeFileSync(join(ws, 'bad.json'), '{"target": "local"}');
  const r = await cli(ws, 'submit', '--spec', join(ws, 'bad.json'));
  assert.equal(r.code, 2);
  assert.match(r.err, /bad job spec: "command" must be/);
});
