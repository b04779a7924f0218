// Jobs on the `local` target with real processes: a job outlives the CLI that started it, records its exit code, is
// seen by `quarry jobs list` from another process, is followed with `logs --follow`, and is cancelled with SIGTERM
// (which a trainer can catch to save first) then SIGKILL; a pid reused by another program is never taken for the job.
// A job being submitted while another process lists the jobs stays tracked: real processes, stopped and resumed at the
// moments that matter.
import { type TestContext, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  watch,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { JobStore, cancelJob, readLog, refreshJob, submitJob } from '../../../src/app/jobs';
import { jobSpecProblem, newJobRecord } from '../../../src/core/training/jobs/job';
import { main } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';
import { until } from '../../support/until';

const node = process.execPath;
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

const cliJs = join(__dirname, '..', '..', '..', 'src', 'cli', 'run.js');

/** A CLI process, with its output and a promise of its exit code. */
function quarry(cwd: string, ...argv: string[]) {
  const child = spawn(node, [cliJs, 'jobs', ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { child, exited, out: () => out, err: () => err };
}

const stopped = (p: ChildProcess) => {
  try {
    return readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T') ?? false;
  } catch {
    return false;
  }
};

/** A `jobs submit` process stopped (SIGSTOP) while its job is staged: made, but not yet recorded as started. */
async function submitStoppedWhileStaged(t: TestContext, ws: string, spec: string) {
  const jobs = join(ws, '.quarry', 'jobs');
  mkdirSync(jobs, { recursive: true });
  for (let attempt = 0; attempt < 40; attempt++) {
    const submit = quarry(ws, 'submit', '--spec', spec, '--json');
    t.after(() => {
      submit.child.kill('SIGKILL');
    });
    const seen: { id: string | null } = { id: null };
    const watcher = watch(jobs, { recursive: true }, (_e, name) => {
      const m = /^([\w.-]+)[/\\]job\.json$/.exec(String(name));
      if (m && seen.id === null) {
        seen.id = m[1];
        submit.child.kill('SIGSTOP');
      }
    });
    let ended = false;
    void submit.exited.then(() => (ended = true));
    await until('the submit to stop or end', () => ended || stopped(submit.child));
    watcher.close();
    const id = seen.id;
    const caught =
      !ended &&
      id !== null &&
      !existsSync(join(jobs, id, 'job.lock')) &&
      JSON.parse(readFileSync(join(jobs, id, 'job.json'), 'utf8')).status === 'staged';
    if (caught && id !== null) return { submit, id };
    // Stopped too late (the job was already recorded as running) or while writing its record: let it finish, stop its
    // job, try again.
    submit.child.kill('SIGCONT');
    await submit.exited;
    const done = JSON.parse(submit.out() || '{}') as { id?: string };
    if (done.id) await cancelJob(new JobStore(ws), done.id, 100);
  }
  throw new Error('never caught a submit while its job was staged');
}

test('a job submitted while `jobs list` runs in another process is not recorded lost; cancel stops it', async (t) => {
  const ws = tempDir();
  mkdirSync(join(ws, '.quarry'));
  const spec = join(ws, 'job.json');
  writeFileSync(
    spec,
    JSON.stringify({ target: 'local', name: 'long', command: [node, '-e', 'setInterval(() => {}, 1e3)'] }),
  );
  const targets = join(ws, '.quarry', 'targets.json');
  writeFileSync(targets, '{}');
  // 1. The submitter has made the job's folder (staged) and is stopped before it records the job's pid.
  const { submit, id } = await submitStoppedWhileStaged(t, ws, spec);
  // 2. A `jobs list` reads the staged record. The targets file becomes a FIFO, so a lister that goes on to ask the
  //    target about that record waits, holding what it read, until this test writes the targets.
  rmSync(targets);
  assert.equal(spawnSync('mkfifo', [targets]).status, 0);
  const list = quarry(ws, 'list', '--json');
  let listEnded = false;
  void list.exited.then(() => (listEnded = true));
  let writer: number | null = null;
  await until('the lister to end or to wait on the targets', () => {
    if (listEnded) return true;
    try {
      writer = openSync(targets, constants.O_WRONLY | constants.O_NONBLOCK);
      return true;
    } catch {
      return false;
    }
  });
  // 3. The submitter goes on and records the job as running, with its pid.
  submit.child.kill('SIGCONT');
  assert.equal(await submit.exited, 0, submit.err());
  const pid = (JSON.parse(submit.out()) as { remote: { pid: number } }).remote.pid;
  // Whatever the record says, the job's process is stopped when the test ends.
  t.after(() => {
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
  });
  // 4. Only now does the lister (if it waits) get the targets and write what it concluded from the staged record.
  if (writer !== null) {
    writeSync(writer, '{}');
    closeSync(writer);
  }
  assert.equal(await list.exited, 0, list.err());
  rmSync(targets);
  const store = new JobStore(ws);
  const job = store.get(id);
  assert.equal(job.status, 'running', `the job is ${job.status}: ${job.reason}`);
  assert.equal(job.remote.pid, pid, 'its pid is recorded');
  assert.ok(groupAlive(pid), 'its process runs');
  const listed = (JSON.parse(list.out()) as Array<{ id: string; status: string }>).find((j) => j.id === id);
  assert.equal(listed?.status, 'staged', 'the lister saw a starting job, not a lost one');
  const cancelled = quarry(ws, 'cancel', id, '--grace-s', '1');
  assert.equal(await cancelled.exited, 0, cancelled.err());
  assert.equal(store.get(id).status, 'cancelled');
  assert.ok(!groupAlive(pid), 'cancel stopped the job');
});

test('a job cancelled while it starts is stopped by its submitter once it runs', async (t) => {
  const ws = tempDir();
  const spec = join(ws, 'job.json');
  writeFileSync(spec, JSON.stringify({ target: 'local', command: [node, '-e', 'setInterval(() => {}, 1e3)'] }));
  const { submit, id } = await submitStoppedWhileStaged(t, ws, spec);
  const cancel = quarry(ws, 'cancel', id, '--grace-s', '1');
  const cancelCode = await cancel.exited;
  const afterCancel = new JobStore(ws).get(id).status;
  submit.child.kill('SIGCONT');
  assert.equal(await submit.exited, 0, submit.err());
  const pid = (JSON.parse(submit.out()) as { remote: { pid: number } }).remote.pid;
  t.after(() => {
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
  });
  assert.equal(cancelCode, 0, cancel.err());
  assert.equal(afterCancel, 'cancelled', 'the starting job is marked cancelled');
  const job = new JobStore(ws).get(id);
  assert.deepEqual([job.status, job.remote.pid], ['cancelled', pid]);
  assert.ok(!groupAlive(pid), 'the submitter stopped the job it had been asked to cancel');
});

test('a staged job whose submitter is gone is lost, saying so; a live submitter keeps it starting', async () => {
  const ws = tempDir();
  const store = new JobStore(ws);
  const gone = spawnSync(node, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
  const job = newJobRecord({ target: 'local', command: ['true'] }, '20250101-000000-0001');
  job.submitter = { pid: Number(gone.stdout.trim()), procStart: '1', host: hostname() };
  store.create(job);
  const lost = await refreshJob(store, job.id);
  assert.equal(lost.status, 'lost');
  assert.match(
    lost.reason ?? '',
    /the process that submitted it \(pid \d+\) ended before it recorded where the job runs/,
  );
  const live = newJobRecord({ target: 'local', command: ['true'] }, '20250101-000000-0002');
  live.submitter = { pid: process.pid, procStart: null, host: hostname() };
  store.create(live);
  assert.equal((await refreshJob(store, live.id)).status, 'staged');
  assert.equal(
    (await cli(ws, 'list')).out
      .split('\n')
      .find((l) => l.startsWith(live.id))
      ?.split(/\s+/)[1],
    'starting',
  );
});
