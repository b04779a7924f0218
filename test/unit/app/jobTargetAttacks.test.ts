// A cloned repository's `.quarry/targets.json` is untrusted input. These are the attacks it carried, each run for
// real: the system `ssh` (/usr/bin/ssh), which runs a config file's ProxyCommand or Match exec before it connects;
// `quarry jobs submit` through the CLI; the Slurm target's scripts run by /bin/sh. Each must leave the file the attack
// would create uncreated, and say in words what was refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newJobRecord } from '../../../src/core/training/jobs/job';
import { targetConfigProblem } from '../../../src/core/training/jobs/targets';
import { Shell } from '../../../src/app/jobs/targets/shell';
import { SlurmTarget } from '../../../src/app/jobs/targets/slurm';
import { runQuarry } from '../../support/cli';
import { tempDir } from '../../helpers/fixtures';

const node = process.execPath;

const cli = (cwd: string, ...argv: string[]) => runQuarry(['jobs', ...argv], cwd);

/** A workspace whose targets.json names `target` as "box", and a spec for it; `quarry jobs submit` on it. */
async function submitTo(target: Record<string, unknown>, ws = tempDir()) {
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  writeFileSync(join(ws, '.quarry', 'targets.json'), JSON.stringify({ box: target }));
  writeFileSync(join(ws, 'job.json'), JSON.stringify({ target: 'box', command: ['python3', '-c', 'pass'] }));
  const r = await cli(ws, 'submit', '--spec', 'job.json');
  return { ...r, started: existsSync(join(ws, '.quarry', 'jobs')) };
}

test('an ssh config that runs commands (ProxyCommand, Match exec, LocalCommand, Include) is refused', async () => {
  const outside = tempDir();
  const pwned = join(outside, 'pwned');
  const included = join(outside, 'included');
  writeFileSync(included, `ProxyCommand touch ${pwned}\n`);
  const configs = {
    ProxyCommand: `Host *\n  ProxyCommand touch ${pwned}\n`,
    'proxycommand=': `HostName 127.0.0.1\nproxycommand=touch ${pwned}\n`,
    'Match exec': `Match exec "touch ${pwned}"\n  User nobody\n`,
    'match host exec': `match host * EXEC "touch ${pwned}"\n`,
    LocalCommand: `PermitLocalCommand yes\nLocalCommand touch ${pwned}\n`,
    Include: `Include ${included}\n`,
    KnownHostsCommand: `KnownHostsCommand /bin/sh -c "touch ${pwned}"\n`,
  };
  for (const [what, text] of Object.entries(configs)) {
    const file = join(outside, `config-${what.replace(/\W/g, '_')}`);
    writeFileSync(file, text);
    const r = await submitTo({ kind: 'ssh', host: 'box.invalid', sshConfig: file, remoteDir: '/tmp/q' });
    assert.ok(!existsSync(pwned), `${what}: ssh ran the config's command`);
    assert.equal(r.code, 2, `${what}: ${r.err}`);
    assert.match(
      r.err,
      /\.quarry\/targets\.json: target "box": "sshConfig" names .*, which ssh would use to run commands on this/,
      what,
    );
    assert.ok(!r.started, `${what}: a job folder was made`);
  }
  // The same file inside the workspace (a repository's own config) is refused for where it is.
  const ws = tempDir();
  mkdirSync(join(ws, '.quarry'));
  writeFileSync(join(ws, '.quarry', 'ssh_config'), configs.ProxyCommand);
  const r = await submitTo({ kind: 'ssh', host: 'box', sshConfig: '.quarry/ssh_config', remoteDir: '/tmp/q' }, ws);
  assert.equal(r.code, 2);
  assert.match(r.err, /"sshConfig" names .*ssh_config, a file inside the workspace/);
  assert.ok(!existsSync(pwned));
});

test('host, user and identityFile that ssh would read as options are refused before ssh runs', async () => {
  const outside = tempDir();
  const pwned = join(outside, 'pwned');
  const evil = `-oProxyCommand=touch ${pwned}`;
  for (const [key, target] of [
    ['host', { kind: 'ssh', host: evil, remoteDir: '/tmp/q' }],
    ['user', { kind: 'ssh', host: 'box.invalid', user: evil, remoteDir: '/tmp/q' }],
    ['identityFile', { kind: 'ssh', host: 'box.invalid', identityFile: evil, remoteDir: '/tmp/q' }],
    ['host', { kind: 'slurm', host: evil, remoteDir: '/tmp/q' }],
  ] as const) {
    const r = await submitTo(target);
    assert.equal(r.code, 2, r.err);
    assert.match(r.err, new RegExp(`targets\\.json: target "box": "${key}" must not begin with "-"`));
    assert.ok(!existsSync(pwned) && !r.started);
  }
  // Whatever a host says, ssh's argv has "--" before it.
  const argv = new Shell({ host: 'h', user: 'u' }).argv('true');
  assert.equal(argv[argv.indexOf('h') - 1], '--');
});

test('every field a targets.json controls is checked: shell and option characters, ranges, formats', () => {
  const ssh = { kind: 'ssh', host: 'box', remoteDir: '/r' };
  const slurm = { kind: 'slurm', remoteDir: '/r' };
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ ...ssh, user: 'me;touch x' }, /"user" must be a user name/],
    [{ ...ssh, port: 70000 }, /"port" must be a port number/],
    [{ ...ssh, port: 0 }, /"port" must be a port number/],
    [{ ...ssh, host: 'box\nProxyCommand x' }, /"host" must not hold a newline/],
    [{ ...ssh, remoteDir: "/r'; touch x; '" }, /"remoteDir" must be an absolute path/],
    [{ ...ssh, remoteDir: 'relative' }, /"remoteDir" must be an absolute path/],
    [{ ...ssh, python: 'python3 -c "import os"' }, /"python" must be a program name or an absolute path/],
    [{ ...ssh, python: '$(touch x)' }, /"python" must be a program name/],
    [{ ...ssh, python: '-c' }, /"python" must not begin with "-"/],
    [{ kind: 'local', env: { LD_PRELOAD: '/r/evil.so' } }, /"env.LD_PRELOAD" is not set by a target/],
    [{ kind: 'local', env: { BASH_ENV: '/r/evil.sh' } }, /"env.BASH_ENV" is not set by a target/],
    [{ kind: 'local', env: { T: { secret: true, from: 'A;B' } } }, /"env.T.from" is not an environment variable name/],
    [{ kind: 'ray', address: 'file:///etc/passwd' }, /"address" must be the dashboard URL/],
    [{ kind: 'ray', address: 'http://h:8265/\nx' }, /"address" must/],
    [{ ...slurm, partition: 'gpu\ntouch /tmp/x' }, /"partition" must not hold a newline/],
    [{ ...slurm, partition: 'gpu;x' }, /"partition" must be a Slurm name/],
    [{ ...slurm, account: '-x' }, /"account" must not begin with "-"/],
    [{ ...slurm, time: '1:00:00\ntouch /tmp/x' }, /"time" must not hold a newline/],
    [{ ...slurm, time: 'soon' }, /"time" must be a Slurm time limit/],
    [{ ...slurm, sbatchArgs: ['--wrap=touch /tmp/x'] }, /--wrap is not an sbatch option a target may add/],
    [{ ...slurm, sbatchArgs: ['--export=ALL,LD_PRELOAD=/x'] }, /--export is not an sbatch option/],
    [{ ...slurm, sbatchArgs: ['--output=/home/me/.bashrc'] }, /--output is not an sbatch option/],
    [{ ...slurm, sbatchArgs: ['--qos=high\ntouch /tmp/x'] }, /the value of --qos holds a space, quote, newline/],
    [{ ...slurm, sbatchArgs: ['-q', 'high'] }, /"-q" is not --option or --option=value/],
  ];
  for (const [config, want] of cases)
    assert.match(targetConfigProblem(config) ?? 'accepted', want, JSON.stringify(config));
  for (const time of ['90', '1:00:00', '2-00:00:00', '1-12', 'UNLIMITED'])
    assert.equal(targetConfigProblem({ ...slurm, time }), null, time);
  const fine = { ...slurm, partition: 'gpu-a100', account: 'lab_1', sbatchArgs: ['--qos=high', '--exclusive'] };
  assert.equal(targetConfigProblem({ ...fine, python: '/opt/conda/bin/python3.11', port: 22 }), null);
});

function slurmJob(command: string[]) {
  const ws = tempDir();
  const dir = join(ws, 'job');
  mkdirSync(dir);
  writeFileSync(join(dir, 'launch.json'), '{}\n');
  return { ws, dir, job: newJobRecord({ target: 'hpc', command }, 'j1') };
}

test('Slurm: a newline in the partition is refused before any batch script is written', async () => {
  const { ws, dir, job } = slurmJob(['true']);
  const pwned = join(ws, 'pwned');
  const target = new SlurmTarget('hpc', {
    kind: 'slurm',
    remoteDir: join(ws, 'remote'),
    partition: `gpu\ntouch ${pwned}`,
  });
  await assert.rejects(target.submit(job, dir), /"partition" must not hold a newline/);
  assert.ok(!existsSync(join(ws, 'remote', 'j1', 'job.sbatch')), 'a batch script was written');
  const r = await submitTo({ kind: 'slurm', remoteDir: '/tmp/q', partition: `gpu\ntouch ${pwned}` });
  assert.equal(r.code, 2);
  assert.match(r.err, /targets\.json: target "box": "partition" must not hold a newline/);
  assert.ok(!r.started && !existsSync(pwned));
});

test('Slurm: an argument holding the here-document delimiter stays data (the script, run by /bin/sh)', async () => {
  const arg = 'a\nQUARRY_EOF\ntouch PWNED\nQUARRY_EOF_\n';
  const script = 'require("fs").writeFileSync("out/arg", process.argv[1])';
  const { ws, dir, job } = slurmJob([node, '-e', script, arg]);
  const remote = join(ws, 'remote');
  const target = new SlurmTarget('hpc', { kind: 'slurm', remoteDir: remote });
  // Without Slurm here, sbatch itself fails; the batch script is written before it runs.
  await target.submit(job, dir).catch(() => undefined);
  const rdir = join(remote, 'j1');
  assert.ok(!existsSync(join(rdir, 'PWNED')), 'the argument ended the here-document and ran as a command');
  const sh = spawnSync('/bin/sh', ['job.sbatch'], { cwd: rdir, encoding: 'utf8' });
  assert.equal(sh.status, 0, sh.stderr);
  assert.equal(readFileSync(join(rdir, 'out', 'arg'), 'utf8'), arg);
  assert.equal(readFileSync(join(rdir, 'exit_code'), 'utf8').trim(), '0');
  assert.ok(!existsSync(join(rdir, 'PWNED')));
});

/** A job.json as a cloned repository could carry it, in `ws`. */
function plantJob(ws: string, id: string, remote: Record<string, unknown>): void {
  mkdirSync(join(ws, '.quarry', 'jobs', id, 'out'), { recursive: true });
  const rec = { ...newJobRecord({ target: 'local', command: ['true'] }, id), status: 'running', remote };
  writeFileSync(join(ws, '.quarry', 'jobs', id, 'job.json'), JSON.stringify(rec));
}

test('a planted job.json cannot make `jobs cancel` signal a process that is not its job', async (t) => {
  const ws = tempDir();
  // A process group of this test's, named by a record without the start time Quarry records for its own jobs.
  const victim = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  t.after(() => {
    victim.kill('SIGKILL');
  });
  const pid = victim.pid as number;
  plantJob(ws, '20250101-000000-aaaa', { pid });
  const r = await cli(ws, 'cancel', '20250101-000000-aaaa', '--grace-s', '0');
  assert.equal(r.code, 0, r.err);
  // Alive: its /proc entry is there and it is not a zombie (signalled, not yet reaped).
  const state = existsSync(`/proc/${pid}/stat`) ? readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] : 'gone';
  assert.ok(!['Z', 'gone'].includes(state), `cancel signalled a process the record merely named (${state})`);
  // pid 1 (kill(-1) signals every process) and 0 (this process's own group) are not job pids: the record is refused.
  // Only `status` is asked here, which signals nothing (kill with signal 0).
  for (const bad of [1, 0, -2]) {
    plantJob(ws, `20250101-000000-b00${bad + 2}`, { pid: bad });
    const s = await cli(ws, 'status', `20250101-000000-b00${bad + 2}`);
    assert.equal(s.code, 2, `pid ${bad}: ${s.out}`);
    assert.match(s.err, /"remote\.pid" must be a process id above 1/);
  }
});
