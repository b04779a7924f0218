// The parts of the job targets that need no services, with real files and real shells: targets.json checking, secrets
// kept out of job files (and reaching the job), the incremental pull (by byte offset, whole metrics lines only, nothing
// written from a cut-off answer), staging and path rewriting, Slurm's states and sbatch options, and the CLI's
// `submit --recipe` and `pull`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JobStore, pullJob, refreshJob, submitJob } from '../../../src/app/jobs';
import { parseTargets, splitEnv, targetConfigProblem } from '../../../src/core/training/jobs/targets';
import { newJobRecord, type JobRecord } from '../../../src/core/training/jobs/job';
import { pullFiles, READ_SECRETS, secretsInput, stage, stagePlan } from '../../../src/app/jobs/targets/remoteFiles';
import { Shell, sshOptions } from '../../../src/app/jobs/targets/shell';
import { processStatus } from '../../../src/app/jobs/targets/ssh';
import { batchScript, hereDocument, sbatchOptions, slurmStatus } from '../../../src/app/jobs/targets/slurm';
import { sshConfigProblem } from '../../../src/core/training/jobs/sshConfigCheck';
import { runQuarry } from '../../support/cli';
import { tempDir } from '../../helpers/fixtures';
import { until } from '../../support/until';

const node = process.execPath;
function job(over: Partial<JobRecord> = {}): JobRecord {
  return { ...newJobRecord({ target: 't', command: ['python', '-c', 'pass'] }, 'j1'), ...over };
}

test('targets.json: each kind is checked and a bad field is named', () => {
  assert.equal(targetConfigProblem({ kind: 'ssh', remoteDir: '/x' }), '"host" is required');
  assert.equal(targetConfigProblem({ kind: 'ssh', host: 'h' }), '"remoteDir" is required');
  assert.equal(targetConfigProblem({ kind: 'slurm', remoteDir: '/x', gpus: 'two' }), '"gpus" must be a whole number');
  assert.equal(
    targetConfigProblem({ kind: 'slurm', remoteDir: '/x', gpuFlag: 'x' }),
    '"gpuFlag" must be "gres" or "gpus-per-node"',
  );
  assert.equal(
    targetConfigProblem({ kind: 'ray', address: '127.0.0.1:8265' }),
    '"address" must be the dashboard URL, e.g. http://127.0.0.1:8265',
  );
  assert.equal(targetConfigProblem({ kind: 'k8s' }), '"kind" must be one of local, ssh, slurm, ray');
  assert.equal(
    targetConfigProblem({ kind: 'local', env: { TOKEN: { secret: 'yes' } } }),
    '"env.TOKEN" must be a string or {"secret": true, "from"?: NAME}',
  );
  assert.equal(targetConfigProblem({ kind: 'slurm', remoteDir: '/x', partition: 'gpu', gpus: 8, nodes: 2 }), null);
  assert.throws(
    () => parseTargets({ box: { kind: 'ssh' } }, 'targets.json'),
    /targets.json: target "box": "host" is required/,
  );
  assert.deepEqual(splitEnv({ A: '1', T: { secret: true }, U: { secret: true, from: 'MY_U' } }), {
    plain: { A: '1' },
    secrets: { T: 'T', U: 'MY_U' },
  });
});

test('ssh options: host keys are always checked, nothing prompts, the config file and port pass through', () => {
  const args = sshOptions({ host: 'h', port: 2222, sshConfig: '/c', user: 'me', identityFile: '/k' }).join(' ');
  assert.match(args, /StrictHostKeyChecking=yes/);
  assert.match(args, /BatchMode=yes/);
  assert.match(args, /-F \/c -p 2222 -l me -i \/k/);
  assert.doesNotMatch(args, /StrictHostKeyChecking=(no|accept-new)|UserKnownHostsFile=\/dev\/null/);
  assert.match(args, /PermitLocalCommand=no/);
  const argv = new Shell({ host: 'h' }).argv('true');
  assert.deepEqual(argv.slice(-3, -1), ['--', 'h'], 'the host after "--"');
  assert.ok(argv.includes('ClearAllForwardings=yes'));
});

test('ssh config check: directives that run commands, in any case and any Key=Value form; the rest passes', () => {
  for (const text of [
    'ProxyCommand nc %h %p',
    'Host *\n\tproxycommand=nc %h %p',
    '  PROXYCOMMAND = nc %h %p',
    'Match exec "true"',
    'match host x !EXEC true',
    'Match Exec=true',
    'LocalCommand id',
    'PermitLocalCommand yes',
    'KnownHostsCommand /bin/true',
    'Include ~/.ssh/other',
    'include=other',
    'PKCS11Provider /tmp/evil.so',
    'SecurityKeyProvider /tmp/evil.so',
    'RemoteCommand id',
    'ProxyJump -oProxyCommand=x',
    'ProxyJump ok,-bad',
  ]) {
    assert.notEqual(sshConfigProblem(text), null, text);
  }
  assert.match(sshConfigProblem('# x\nHost a\n  ProxyCommand nc') ?? '', /^line 3: proxycommand runs a command/);
  const services = [
    'Host quarry-test',
    '  HostName 127.0.0.1',
    '  Port 22222',
    '  User root',
    '  IdentityFile /tmp/q/id_user',
    '  IdentitiesOnly yes',
    '  UserKnownHostsFile /tmp/q/known_hosts',
    '  ProxyJump me@bastion:2222,gw',
    '  # ProxyCommand in a comment is nothing',
  ].join('\n');
  assert.equal(sshConfigProblem(services), null);
});

test('a here-document delimiter is random and never one that occurs in the body', () => {
  const body = 'line\nQUARRY_EOF\n';
  const a = hereDocument('f', body);
  const delim = /<<'(\w+)'/.exec(a)?.[1] ?? '';
  assert.match(delim, /^QUARRY_EOF_[0-9a-f]{24}$/);
  assert.ok(a.endsWith(`\n${delim}`) && !body.includes(delim));
  assert.notEqual(delim, /<<'(\w+)'/.exec(hereDocument('f', body))?.[1]);
});

test('a secret reaches the job through its environment only: job.json and launch.json hold its name', async () => {
  const ws = tempDir();
  mkdirSync(join(ws, '.quarry'));
  writeFileSync(
    join(ws, '.quarry', 'targets.json'),
    JSON.stringify({
      here: { kind: 'local', env: { PLAIN: 'p', API_TOKEN: { secret: true, from: 'QUARRY_TEST_TOKEN' } } },
    }),
  );
  const store = new JobStore(ws, { secret: async (n) => (n === 'QUARRY_TEST_TOKEN' ? 's3cr3t-value' : undefined) });
  const j = await submitJob(store, {
    target: 'here',
    command: [node, '-e', 'require("fs").writeFileSync("out/seen", process.env.API_TOKEN + "/" + process.env.PLAIN)'],
  });
  await until('the job to end', async () => (await refreshJob(store, j.id)).status === 'succeeded');
  assert.equal(readFileSync(join(store.dir(j.id), 'out', 'seen'), 'utf8'), 's3cr3t-value/p');
  for (const f of ['job.json', 'launch.json']) {
    const text = readFileSync(join(store.dir(j.id), f), 'utf8');
    assert.doesNotMatch(text, /s3cr3t-value/, f);
    assert.match(text, /API_TOKEN/, f);
  }
  const without = new JobStore(ws, { secret: async () => undefined });
  await assert.rejects(
    submitJob(without, { target: 'here', command: ['true'] }),
    /secret API_TOKEN \(from QUARRY_TEST_TOKEN\) has no value/,
  );
});

test(
  'secrets on standard input become exported variables ' + '(values with quotes, spaces and newlines intact)',
  async () => {
    const value = `it's "a"\nsecret $HOME`;
    const r = await new Shell(null).run([...READ_SECRETS, 'printf %s "$TOKEN"'].join('\n'), {
      stdin: secretsInput({ TOKEN: value }),
    });
    assert.equal(r.stdout.toString('utf8'), value);
  },
);

test('pull by byte offset: logs grow, metrics take whole lines only, the rest comes later', async () => {
  const remote = tempDir();
  const local = tempDir();
  mkdirSync(join(remote, 'out'));
  writeFileSync(join(remote, 'stdout.log'), 'one\ntw');
  writeFileSync(join(remote, 'out', 'metrics.jsonl'), '{"step":1}\n{"st');
  mkdirSync(join(remote, 'out', 'checkpoint-2'));
  mkdirSync(join(remote, 'out', 'not-a-checkpoint'));
  const shell = new Shell(null);
  const first = await pullFiles(shell, remote, local);
  assert.deepEqual(first, { bytes: 17, checkpoints: ['checkpoint-2'], error: null });
  assert.equal(readFileSync(join(local, 'stdout.log'), 'utf8'), 'one\ntw');
  assert.equal(readFileSync(join(local, 'out', 'metrics.jsonl'), 'utf8'), '{"step":1}\n');
  appendFileSync(join(remote, 'stdout.log'), 'o\n');
  appendFileSync(join(remote, 'out', 'metrics.jsonl'), 'ep":2}\n');
  await pullFiles(shell, remote, local);
  assert.equal(readFileSync(join(local, 'stdout.log'), 'utf8'), 'one\ntwo\n');
  assert.equal(readFileSync(join(local, 'out', 'metrics.jsonl'), 'utf8'), '{"step":1}\n{"step":2}\n');
  const again = await pullFiles(shell, remote, local);
  assert.equal(again.bytes, 0, 'nothing twice');
  const gone = await pullFiles(shell, join(remote, 'nope'), local);
  assert.match(gone.error ?? '', /is missing on this machine/);
});

test(
  'a remote metrics file started again (verl resuming) ' + 'is read from its start; the history pulled stays',
  async () => {
    const remote = tempDir();
    const local = tempDir();
    mkdirSync(join(remote, 'out'));
    const metrics = join(remote, 'out', 'metrics.jsonl');
    writeFileSync(metrics, '{"step":1}\n{"step":2}\n{"step":3}\n');
    const shell = new Shell(null);
    await pullFiles(shell, remote, local);
    // The run resumes from step 2: verl opens its file logger with "wb", so the file starts over, shorter.
    writeFileSync(metrics, '{"step":3}\n');
    await pullFiles(shell, remote, local);
    appendFileSync(metrics, '{"step":4}\n');
    await pullFiles(shell, remote, local);
    assert.equal(
      readFileSync(join(local, 'out', 'metrics.jsonl'), 'utf8'),
      '{"step":1}\n{"step":2}\n{"step":3}\n{"step":3}\n{"step":4}\n',
    );
    assert.equal((await pullFiles(shell, remote, local)).bytes, 0, 'nothing twice');
  },
);

test('overlapping pulls of one job (the monitor and a panel, or two processes) write each byte once', async () => {
  const remote = tempDir();
  const local = tempDir();
  mkdirSync(join(remote, 'out'));
  const metrics = join(remote, 'out', 'metrics.jsonl');
  const lines = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => `{"step":${from + i}}\n`).join('');
  writeFileSync(metrics, lines(1, 3));
  writeFileSync(join(remote, 'stdout.log'), 'a\n');
  const shell = new Shell(null);
  // Both ask from the same offsets; whichever writes second finds them moved on and writes nothing again.
  await Promise.all([pullFiles(shell, remote, local), pullFiles(shell, remote, local)]);
  // More comes; four pulls at once, the file growing while they run.
  appendFileSync(metrics, lines(4, 6));
  const grow = (async () => {
    await new Promise((r) => setTimeout(r, 5));
    appendFileSync(metrics, lines(7, 9));
    appendFileSync(join(remote, 'stdout.log'), 'b\n');
  })();
  await Promise.all([...[...Array(4)].map(() => pullFiles(shell, remote, local)), grow]);
  await pullFiles(shell, remote, local);
  assert.equal(readFileSync(join(local, 'out', 'metrics.jsonl'), 'utf8'), lines(1, 9));
  assert.equal(readFileSync(join(local, 'stdout.log'), 'utf8'), 'a\nb\n');
  assert.ok(!existsSync(join(local, 'pull.lock')), 'the lock is released');
});

test('staging copies the launch folder and the data and rewrites their paths in the command', async () => {
  const ws = tempDir();
  const launch = join(ws, 'launch');
  mkdirSync(launch);
  writeFileSync(join(launch, 'launch.sh'), 'echo hi\n');
  const data = join(ws, 'sft.jsonl');
  writeFileSync(data, '{}\n');
  const jobDir = join(ws, 'job');
  mkdirSync(jobDir);
  writeFileSync(join(jobDir, 'launch.json'), '{}');
  const remote = join(tempDir(), 'r', 'j1');
  const j = job({ cwd: launch, data, command: ['python', `${launch}/launch.sh`, '--data', data, `--x=${data}`] });
  const plan = stagePlan(j, jobDir, remote, '/venv/bin/python');
  assert.deepEqual(plan.command, [
    '/venv/bin/python',
    `${remote}/launch/launch.sh`,
    '--data',
    `${remote}/data/sft.jsonl`,
    `--x=${remote}/data/sft.jsonl`,
  ]);
  await stage(new Shell(null), plan, remote);
  assert.equal(readFileSync(join(remote, 'launch', 'launch.sh'), 'utf8'), 'echo hi\n');
  assert.equal(readFileSync(join(remote, 'data', 'sft.jsonl'), 'utf8'), '{}\n');
  assert.ok(existsSync(join(remote, 'launch.json')) && existsSync(join(remote, 'out')));
});

test('ssh process states: exit code, running, gone (lost), cancelled stays cancelled', () => {
  assert.deepEqual(processStatus(job(), 'exit 0\n', 'h'), { status: 'succeeded', exitCode: 0, reason: null });
  assert.equal(processStatus(job(), 'exit 2\n', 'h').status, 'failed');
  assert.equal(processStatus(job(), 'running\n', 'h').status, 'running');
  assert.match(processStatus(job(), 'gone\n', 'h').reason ?? '', /ended without recording an exit code/);
  assert.equal(processStatus(job({ status: 'cancelled' }), 'exit 143\n', 'h').status, 'cancelled');
});

test('Slurm: states from squeue, sacct, scontrol and the exit file; cancelled from outside is said', () => {
  const j = job({ status: 'running', remote: { slurmJobId: '7' } });
  assert.deepEqual(slurmStatus(j, 'squeue PENDING|Resources\n'), {
    status: 'running',
    exitCode: null,
    reason: "waiting in Slurm's queue (Resources)",
  });
  assert.equal(slurmStatus(j, 'squeue RUNNING|None\n').status, 'running');
  assert.deepEqual(slurmStatus(j, 'sacct COMPLETED|0:0\nexit 0\n'), { status: 'succeeded', exitCode: 0, reason: null });
  assert.deepEqual(
    slurmStatus(j, 'scontrol JobState=TIMEOUT Reason=TimeLimit ExitCode=0:1 \n').reason,
    'Slurm: TIMEOUT',
  );
  const c = slurmStatus(j, 'scontrol JobState=CANCELLED Reason=None ExitCode=0:15 \nexit 143\n');
  assert.equal(c.status, 'cancelled');
  assert.match(c.reason ?? '', /scancel from outside Quarry/);
  assert.deepEqual(slurmStatus(j, 'exit 1\n').status, 'failed');
  assert.equal(slurmStatus(j, '').status, 'lost');
  assert.equal(slurmStatus(job({ status: 'cancelled', remote: { slurmJobId: '7' } }), 'exit 0\n').status, 'cancelled');
});

test('Slurm: sbatch options from the target, overridden by the job; the batch script runs the wrapper', () => {
  const config = {
    kind: 'slurm' as const,
    remoteDir: '/s',
    partition: 'gpu',
    gpus: 4,
    nodes: 1,
    time: '1:00:00',
    account: 'lab',
    sbatchArgs: ['--exclusive'],
  };
  const j = job({ resources: { gpus: 8, nodes: 2 } });
  assert.deepEqual(sbatchOptions(config, j, '/s/j1'), [
    '--job-name=quarry-j1',
    '--chdir=/s/j1',
    '--output=/s/j1/slurm.log',
    '--partition=gpu',
    '--account=lab',
    '--nodes=2',
    '--time=1:00:00',
    '--gres=gpu:8',
    '--exclusive',
  ]);
  assert.ok(sbatchOptions({ ...config, gpuFlag: 'gpus-per-node' }, j, '/s/j1').includes('--gpus-per-node=8'));
  const script = batchScript(config, job({ env: { A: "it's" } }), '/s/j1', ['python', '-c', 'print(1)']);
  assert.match(script, /^#!\/bin\/sh\n/);
  assert.match(script, /#SBATCH --partition=gpu\n/);
  assert.match(script, /export A="it's"/);
  assert.match(script, /set -- python -c 'print\(1\)'/);
  assert.match(script, /echo "\$code" > exit_code.tmp/);
});

const cli = (cwd: string, ...argv: string[]) => runQuarry(['jobs', ...argv], cwd);

test(
  'CLI: submit --recipe takes a launch folder; ' + 'pull lists metrics and checkpoints; unknown targets are named',
  async () => {
    const ws = tempDir();
    const launch = join(ws, 'launch');
    mkdirSync(launch);
    const script =
      'const fs = require("fs"); fs.mkdirSync("out/checkpoint-1", {recursive: true}); ' +
      'fs.writeFileSync("out/checkpoint-1/w", "x"); fs.writeFileSync("out/metrics.jsonl", "{\\"step\\":1}\\n")';
    writeFileSync(
      join(launch, 'job.json'),
      JSON.stringify({ name: 'from a launch', target: 'local', command: [node, '-e', script], cwd: launch }),
    );
    const r = await cli(ws, 'submit', '--recipe', 'launch', '--json');
    assert.equal(r.code, 0, r.err);
    const id = (JSON.parse(r.out) as { id: string }).id;
    const store = new JobStore(ws);
    await until('the job to end', async () => (await refreshJob(store, id)).status === 'succeeded');
    const pulled = await cli(ws, 'pull', id);
    assert.match(pulled.out, /1 metrics lines in out\/metrics.jsonl/);
    assert.match(pulled.out, /checkpoints: checkpoint-1/);
    const fetched = await pullJob(store, id, 'checkpoint-1');
    assert.equal(readFileSync(join(fetched.fetched!, 'w'), 'utf8'), 'x');
    assert.equal((await cli(ws, 'submit', '--recipe', 'nowhere')).code, 2);
    assert.match((await cli(ws, 'submit', '--recipe', 'nowhere')).err, /not a launch folder/);
    const bad = await cli(ws, 'submit', '--target', 'mars', '--recipe', 'launch');
    assert.match(bad.err, /unknown target 'mars' \(known: local\): targets are named in .quarry\/targets.json/);
  },
);
