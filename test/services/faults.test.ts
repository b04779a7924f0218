// Faults on real services, each ending in a correct state with nothing lost that was already pulled: ssh connections
// dropped mid-job (sshd's session processes killed while Quarry polls), a metrics line cut in half (ssh, Slurm, Ray),
// `scancel` from outside, jobs that fail at start (a module the host lacks, a command that exits at once, a partition
// Slurm refuses, a program Ray cannot run), an unknown host key, a full remote disk, Quarry's own cancel (SIGTERM a
// job can save on, SIGKILL for one that ignores it), another process following the same job folder, and last the Ray
// head restarted mid-job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cancelJob, pullJob, readLog, refreshJob, submitJob } from '../../src/app/jobs';
import { finished, metricSteps, REPO, services, targetsFor, tickerCommand, untilRemote, workspace } from './services';

const { svc, skip } = services();
const cliJs = join(__dirname, '..', '..', 'src', 'cli', 'run.js');

/** sshd's session processes (children of the listener): killing them drops every open connection. */
function dropSshConnections(): number {
  const listener = readFileSync(svc!.ssh.pidFile, 'utf8').trim();
  let n = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === listener) {
        process.kill(Number(pid), 'SIGKILL');
        n++;
      }
    } catch {
      /* gone meanwhile */
    }
  }
  return n;
}

test('ssh: connections dropped again and again mid-job; status and pull recover, no line lost or doubled', {
  skip,
}, async () => {
  const { store } = workspace(targetsFor(svc!));
  const job = await submitJob(store, { target: 'box', command: tickerCommand(25, 0.25) });
  let dropped = 0;
  let retried = 0;
  let stop = false;
  const killer = (async () => {
    while (!stop) {
      dropped += dropSshConnections();
      await new Promise((r) => setTimeout(r, 120));
    }
  })();
  try {
    await untilRemote('the job to end while connections drop', async () => {
      const j = await refreshJob(store, job.id).catch(() => store.get(job.id));
      if (/will retry/.test(j.reason ?? '')) retried++;
      // Another process (the editor after a reload, or a second CLI) follows the same folder.
      const other = spawnSync(process.execPath, [cliJs, 'jobs', 'status', job.id, '--json'], {
        cwd: store.workspace,
        encoding: 'utf8',
      });
      if (other.status === 0) assert.match(JSON.parse(other.stdout).status, /running|succeeded/);
      return j.status === 'succeeded';
    });
  } finally {
    stop = true;
    await killer;
  }
  assert.ok(dropped > 0, 'connections were dropped');
  const done = await finished(store, job.id);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(
    metricSteps(store, job.id),
    Array.from({ length: 25 }, (_, i) => i + 1),
  );
  const ticks = readLog(store, job.id, 'stdout').text.trim().split('\n');
  assert.deepEqual(
    ticks,
    Array.from({ length: 25 }, (_, i) => `tick ${i + 1}`),
  );
  console.log(`dropped ${dropped} ssh connections; ${retried} refreshes said they would retry`);
});

for (const target of ['box', 'hpc', 'ray']) {
  test(`${target}: a metrics line cut in half is kept out until it is whole`, { skip }, async () => {
    const { store } = workspace(targetsFor(svc!));
    const half = [
      'import json, os, sys, time',
      'f = open("out/metrics.jsonl", "a")',
      'f.write(json.dumps({"step": 1}) + "\\n" + \'{"step": \'); f.flush()',
      'print("half written", flush=True)',
      // A job left behind by a failing test ends by itself.
      'deadline = time.time() + 300',
      'while not os.path.exists("go") and time.time() < deadline: time.sleep(0.1)',
      'f.write("2}\\n" + json.dumps({"step": 3}) + "\\n"); f.close()',
    ].join('\n');
    const job = await submitJob(store, { target, command: ['python', '-c', half] });
    await untilRemote('the half line to be written and pulled', async () => {
      await refreshJob(store, job.id);
      return readLog(store, job.id, 'stdout').text.includes('half written') && metricSteps(store, job.id).length > 0;
    });
    await pullJob(store, job.id);
    assert.equal(readFileSync(join(store.dir(job.id), 'out', 'metrics.jsonl'), 'utf8'), '{"step": 1}\n');
    // The remote folder is on this machine (loopback services): let the job finish its line.
    writeFileSync(join(store.get(job.id).remote.dir!, 'go'), '');
    const done = await finished(store, job.id);
    assert.equal(done.status, 'succeeded', done.reason ?? '');
    assert.deepEqual(metricSteps(store, job.id), [1, 2, 3]);
  });
}

test('slurm: a job cancelled with scancel from outside Quarry shows as cancelled', { skip }, async () => {
  const { store } = workspace(targetsFor(svc!));
  const job = await submitJob(store, { target: 'hpc', command: tickerCommand(200, 0.5) });
  await untilRemote('the job to run', async () => {
    await refreshJob(store, job.id);
    return readLog(store, job.id, 'stdout').text.includes('tick 1');
  });
  const r = spawnSync('scancel', [store.get(job.id).remote.slurmJobId!], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const done = await finished(store, job.id);
  assert.equal(done.status, 'cancelled');
  assert.match(done.reason ?? '', /cancelled in Slurm \(scancel from outside Quarry/);
  assert.ok(metricSteps(store, job.id).length >= 1, 'what was pulled stays');
});

test('cancel from Quarry: SIGTERM the job saves on (ssh, slurm, ray), SIGKILL for one that ignores it (ssh)', {
  skip,
}, async () => {
  const { store } = workspace(targetsFor(svc!));
  const polite = [
    'import signal, sys, time',
    'def stop(*a):',
    '    open("out/saved", "w").write("yes"); sys.exit(0)',
    'signal.signal(signal.SIGTERM, stop)',
    'print("ready", flush=True)',
    'while True: time.sleep(0.2)',
  ].join('\n');
  for (const target of ['box', 'hpc', 'ray']) {
    const job = await submitJob(store, { target, command: ['python', '-c', polite] });
    await untilRemote(`the ${target} job to be ready`, async () => {
      await refreshJob(store, job.id);
      return readLog(store, job.id, 'stdout').text.includes('ready');
    });
    const done = await cancelJob(store, job.id, 5000);
    assert.equal(done.status, 'cancelled', `${target}: ${done.reason}`);
    await untilRemote(
      `the ${target} job to have saved`,
      () => existsSync(join(store.get(job.id).remote.dir!, 'out', 'saved')),
      30_000,
    );
    assert.equal((await refreshJob(store, job.id)).status, 'cancelled', 'stays cancelled');
  }
  const stubborn = await submitJob(store, {
    target: 'box',
    command: [
      'python',
      '-c',
      'import signal, time\nsignal.signal(signal.SIGTERM, lambda *a: None)\n' +
        'print("ready", flush=True)\nwhile True: time.sleep(0.2)',
    ],
  });
  await untilRemote('the stubborn job to be ready', async () => {
    await refreshJob(store, stubborn.id);
    return readLog(store, stubborn.id, 'stdout').text.includes('ready');
  });
  const killed = await cancelJob(store, stubborn.id, 500);
  assert.equal(killed.status, 'cancelled');
  const [pid] = readFileSync(join(killed.remote.dir!, 'pid'), 'utf8').split(' ');
  await untilRemote(
    'its process group to be gone',
    () => {
      try {
        process.kill(-Number(pid), 0);
        return false;
      } catch {
        return true;
      }
    },
    10_000,
  );
});

test('jobs that fail at start say why', { skip }, async () => {
  const { store } = workspace(
    targetsFor(svc!, {
      nowhere: { kind: 'slurm', remoteDir: join(svc!.dir, 'remote', 'x'), partition: 'nope', minFreeMB: 1 },
    }),
  );
  await assert.rejects(
    submitJob(store, { target: 'box', command: ['python', '-m', 'no_such_module_xyz'] }),
    /target box cannot run this job: .* cannot import no_such_module_xyz/,
  );
  for (const target of ['box', 'hpc']) {
    const job = await submitJob(store, {
      target,
      command: ['python', '-c', 'import sys; sys.stderr.write("boom: no GPU\\n"); sys.exit(3)'],
    });
    const done = await finished(store, job.id);
    assert.equal(done.status, 'failed');
    assert.equal(done.exitCode, 3);
    assert.match(done.reason ?? '', /exited with code 3( \(NonZeroExitCode\))?: boom: no GPU/, target);
  }
  await assert.rejects(submitJob(store, { target: 'nowhere', command: ['true'] }), /partition/i);
  const rayJob = await submitJob(store, { target: 'ray', command: ['/no/such/program'] });
  const rayDone = await finished(store, rayJob.id);
  assert.equal(rayDone.status, 'failed');
  assert.match(rayDone.reason ?? '', /exit code|No such file/i);
});

test('ssh: an unknown host key is refused with what to do, never accepted', { skip }, async () => {
  const config = join(svc!.dir, 'ssh_config_unknown');
  const empty = join(svc!.dir, 'known_hosts_empty');
  writeFileSync(empty, '');
  writeFileSync(config, readFileSync(svc!.ssh.config, 'utf8').replace(svc!.ssh.knownHosts, empty));
  const { store } = workspace(
    targetsFor(svc!, { stranger: { kind: 'ssh', host: svc!.ssh.host, sshConfig: config, remoteDir: '/tmp/x' } }),
  );
  await assert.rejects(
    submitJob(store, { target: 'stranger', command: ['true'] }),
    /host key of quarry-test .*never accepts host keys/,
  );
  assert.equal(readFileSync(empty, 'utf8'), '', 'nothing was added to known_hosts');
  copyFileSync(svc!.ssh.knownHosts, empty);
});

test('ssh: a full remote disk is refused before submitting, and a staging that fills it fails plainly', {
  skip: skip || (svc?.fullDir ? false : 'no tmpfs could be mounted'),
}, async () => {
  const full = svc!.fullDir!;
  const ssh = { host: svc!.ssh.host, sshConfig: svc!.ssh.config };
  const { ws, store } = workspace(
    targetsFor(svc!, {
      small: { kind: 'ssh', ...ssh, remoteDir: join(full, 'jobs'), python: svc!.python },
      tight: { kind: 'ssh', ...ssh, remoteDir: join(full, 'jobs'), python: svc!.python, minFreeMB: 0 },
    }),
  );
  await assert.rejects(
    submitJob(store, { target: 'small', command: ['true'] }),
    /only \d+ MB free in .*full.* \(the target asks for 1024 MB: minFreeMB\)/,
  );
  const big = join(ws, 'big.bin');
  writeFileSync(big, Buffer.alloc(3 << 20, 1));
  await assert.rejects(
    submitJob(store, { target: 'tight', data: big, command: ['true'] }),
    /no space left on quarry-test in .*full/,
  );
  const [failed] = store.list();
  assert.equal(failed.status, 'failed');
  assert.match(failed.reason ?? '', /no space left/);
  spawnSync('sh', ['-c', `rm -rf ${full}/jobs`]);
});

test('ray: the head restarted mid-job; the job is lost with the reason, what was pulled stays', { skip }, async () => {
  const { store } = workspace(targetsFor(svc!));
  const job = await submitJob(store, { target: 'ray', command: tickerCommand(400, 0.3) });
  await untilRemote('three metrics lines pulled', async () => {
    await refreshJob(store, job.id);
    return metricSteps(store, job.id).length >= 3;
  });
  const before = metricSteps(store, job.id);
  const r = spawnSync('bash', [join(REPO, 'scripts', 'services', 'ray.sh'), 'restart'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const done = await finished(store, job.id, 120_000);
  assert.equal(done.status, 'lost');
  assert.match(done.reason ?? '', /no longer knows job quarry-.* \(its head restarted\?\)/);
  const after = metricSteps(store, job.id);
  assert.deepEqual(after.slice(0, before.length), before, 'nothing pulled was lost');
});
