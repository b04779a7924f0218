// The servers Quarry starts are recorded with who they are and stopped by unload: a real process started as a
// server (its own process group, Quarry's id in its environment) is stopped, its whole group gone. The command that
// stops a server on another host checks the same there: run here by sh as the host would run it, it stops the server
// it started, and leaves alone a pid with another start time and an unrelated group with a copied start time. The
// allow-list of ssh options takes what targets and users pass, and refuses every option that can run a command.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  checkOwnGroup,
  newServerId,
  SERVER_ID_ENV,
  startServerProcess,
} from '../../../src/app/checkpoints/serverProcess';
import { parseRemoteStart, remoteStartArgs, remoteStopArgs } from '../../../src/app/checkpoints/sshTunnel';
import { unloadModel } from '../../../src/app/checkpoints/load';
import { ModelRegistry, type ServerInfo } from '../../../src/core/training/modelRegistry';
import { sshDestinationProblem, sshOptionsProblem } from '../../../src/core/training/sshSafety';
import { groupAlive, procStart } from '../../../src/app/jobs/targets/local';
import { tempDir } from '../../helpers/fixtures';
import { servedOnlyModel } from '../../support/checkpointFixtures';

/** Waits (with no deadline of its own: the test's timeout fails it) until the group has no process left. */
async function groupGone(pgid: number): Promise<void> {
  while (groupAlive(pgid)) await new Promise((r) => setTimeout(r, 20));
}

function killGroupAfter(pgid: number) {
  after(() => {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
}

test('a server Quarry started is stopped by unload: its process group is gone', { timeout: 60_000 }, async () => {
  const ws = tempDir('quarry-started-');
  const id = newServerId();
  // A "server" with a child in its group, as a real one has (workers): sh starting a sleep, then sleeping itself.
  const started = startServerProcess(['sh', '-c', 'sleep 1000 & sleep 1000'], join(ws, 'server.log'), process.env, id);
  killGroupAfter(started.pid);
  assert.ok(started.procStart && started.cmdline, 'its start time and command line are recorded');
  assert.deepEqual(started.cmdline, ['sh', '-c', 'sleep 1000 & sleep 1000']);
  assert.deepEqual(checkOwnGroup(started.pid, started, id), { ok: true });
  assert.equal(checkOwnGroup(started.pid, started, newServerId()).ok, false, 'another id is not this server');
  const server: ServerInfo = {
    kind: 'transformers',
    host: 'local',
    ...started,
    port: 8011,
    command: ['sh'],
    log: join(ws, 'server.log'),
    tunnel: null,
    id,
  };
  new ModelRegistry(ws).put({ ...servedOnlyModel('mine', 'openai:http://127.0.0.1:8011/v1#m'), server });
  const r = unloadModel(ws, 'mine');
  assert.deepEqual(r.said, [`stopped the transformers server (pid ${started.pid})`]);
  assert.equal(r.removed, true);
  await groupGone(started.pid);
  assert.deepEqual(new ModelRegistry(ws).list(), []);
});

test('the remote stop checks on the host that the pid is the server Quarry started', { timeout: 60_000 }, async () => {
  const dir = tempDir('quarry-remote-');
  const id = newServerId();
  // What the host runs for remoteStartArgs, run here by sh: the server starts in its own session, pid and start time
  // printed.
  const start = remoteStartArgs('h', ['sleep', '1000'], join(dir, 'log'), [], { [SERVER_ID_ENV]: id });
  const out = spawnSync('sh', ['-c', start.at(-1)!], { encoding: 'utf8' });
  const there = parseRemoteStart(out.stdout);
  assert.ok(there, out.stdout + out.stderr);
  killGroupAfter(there.pid);
  assert.equal(there.procStart, procStart(there.pid));
  const stop = (pid: number, procStart: string, sid = id) =>
    spawnSync('sh', ['-c', remoteStopArgs('h', pid, { procStart, idVar: SERVER_ID_ENV, id: sid }).at(-1)!], {
      encoding: 'utf8',
    }).stdout.trim();

  // An unrelated group (no Quarry id), its true start time copied: left alone.
  const other = spawn('sleep', ['1000'], { detached: true, stdio: 'ignore' });
  killGroupAfter(other.pid!);
  while (!readFileSync(`/proc/${other.pid}/cmdline`, 'utf8').startsWith('sleep'))
    await new Promise((r) => setTimeout(r, 20));
  assert.equal(stop(other.pid!, procStart(other.pid!)!), 'notours');
  assert.equal(stop(there.pid, String(Number(there.procStart) + 1)), 'other', 'another start time: a reused pid');
  assert.equal(stop(there.pid, there.procStart, newServerId()), 'notours');
  assert.ok(groupAlive(there.pid) && groupAlive(other.pid!), 'neither was signalled');

  assert.equal(stop(there.pid, there.procStart), 'stopped');
  await groupGone(there.pid);
  assert.equal(stop(there.pid, there.procStart), 'gone');
  assert.ok(groupAlive(other.pid!));
  assert.throws(() => remoteStopArgs('h', 1, { procStart: '1', idVar: SERVER_ID_ENV, id }), /pid must be/);
  assert.throws(() => remoteStopArgs('-oProxyCommand=x', 5, { procStart: '1', idVar: SERVER_ID_ENV, id }), /host/);
});

test('the ssh allow-list takes what targets and users pass and refuses what can run a command', () => {
  for (const ok of [
    ['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', 'ConnectTimeout=15'],
    ['-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=3', '-p', '2222', '-l', 'me', '-i', '/k/id_ed25519'],
    ['-p2222', '-lme', '-i~/.ssh/id', '-oPort=22', '-o', 'User me', '-4', '-C'],
  ])
    assert.equal(sshOptionsProblem(ok), null, ok.join(' '));
  for (const bad of [
    ['-oProxyCommand=sh -c x'],
    ['-o', 'proxycommand x'],
    ['-oProxyJump=h'],
    ['-J', 'h'],
    ['-F', '/cfg'],
    ['-F/cfg'],
    ['-oLocalCommand=x'],
    ['-oPermitLocalCommand=yes'],
    ['-oKnownHostsCommand=x'],
    ['-oStrictHostKeyChecking=no'],
    ['-oUserKnownHostsFile=/dev/null'],
    ['-oInclude=/x'],
    ['-oMatch=exec x'],
    ['-L', '1:h:2'],
    ['-R', '1:h:2'],
    ['-E', '/tmp/log'],
    ['-A'],
    ['-p', '22; rm'],
    ['-l', '-oProxyCommand=x'],
    ['-o'],
  ])
    assert.notEqual(sshOptionsProblem(bad), null, bad.join(' '));
  assert.equal(sshDestinationProblem('me@gpu-box.lan'), null);
  assert.equal(sshDestinationProblem('[::1]'), null);
  for (const bad of ['-oProxyCommand=x', 'a b', 'h;rm', '', 'h\n'])
    assert.notEqual(sshDestinationProblem(bad), null, bad);
});

test('a load through --ssh keeps allow-listed options only; others are asked for again at unload', () => {
  const ws = tempDir('quarry-leftout-');
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  const server = {
    kind: 'vllm',
    host: 'gpu',
    pid: 4000,
    port: 8000,
    command: [],
    log: '/l',
    tunnel: { pid: 4001, localPort: 8100 },
    procStart: '5',
    id: 'd'.repeat(32),
    sshOptionsLeftOut: true,
  };
  const model = { ...servedOnlyModel('r', 'openai:http://127.0.0.1:8100/v1#m'), server };
  writeFileSync(join(ws, '.quarry', 'models.json'), JSON.stringify({ schema: 'quarry.models/1', models: [model] }));
  const r = unloadModel(ws, 'r');
  assert.equal(r.removed, false);
  assert.ok(
    r.said.some((s) => /does not keep in the workspace.*--ssh-option/.test(s)),
    r.said.join('\n'),
  );
});
