// A cloned repository's .quarry/models.json is untrusted input (issue 29, items 3, 4 and 8). `quarry checkpoints
// unload` (the built CLI, run as a child process with a kill timer) must not signal a process group Quarry did not
// start: not an unrelated one named by pid, not one whose start time and command line were copied from /proc, not a
// pid the system reused, not the tunnel's pid, and never pid 1 (kill(-1): every process; shown inside a fresh pid
// namespace so no real signal can reach the host's processes). Its ssh options and host must never run a command
// here (ProxyCommand and friends, a -F config file, a host that is an option), checked with the real /usr/bin/ssh.
// `checkpoints list` and `loaded` answer when a file they read is a named pipe.
// Whether a signal was sent is read, without timing, from the victim itself: it blocks SIGTERM, so a SIGTERM sent to
// it or its group stays pending, visible in /proc/<pid>/status.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from '../../helpers/fixtures';
import { servedOnlyModel } from '../../support/checkpointFixtures';
import { procStart } from '../../../src/app/jobs/targets/local';

const CLI = join(repoRoot, 'dist', 'cli.js');
const BLOCK_TERM_THEN_SLEEP =
  'import os, signal; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); ' +
  "os.execvp('sleep', ['sleep', '1000'])";

/** `quarry ARGS…` from the built bundle in `cwd`, killed (and failing the test) if it does not end in 2 minutes. */
function quarry(cwd: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.signal, null, `quarry ${args.join(' ')} did not finish: ${r.stderr}`);
  return r;
}

function procLine(pid: number, key: string): string {
  const m = new RegExp(`^${key}:\\s*(.*)$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? m[1].trim() : '';
}

/** Whether a SIGTERM is pending for `pid` (sent to it or to its group; it blocks SIGTERM, so it is still there). */
function termPending(pid: number): boolean {
  const bit = 1n << 14n; // SIGTERM is 15
  return ['SigPnd', 'ShdPnd'].some((k) => (BigInt(`0x${procLine(pid, k)}`) & bit) !== 0n);
}

function running(pid: number): boolean {
  return existsSync(`/proc/${pid}`) && procLine(pid, 'State')[0] !== 'Z';
}

/** A `sleep` in its own process group that Quarry did not start, SIGTERM blocked; killed when the file ends. */
async function unrelatedSleep(): Promise<ChildProcess & { pid: number }> {
  const child = spawn('python3', ['-c', BLOCK_TERM_THEN_SLEEP], { detached: true, stdio: 'ignore' });
  after(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      /* gone */
    }
  });
  while (!readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').startsWith('sleep'))
    await new Promise((r) => setTimeout(r, 20));
  return child as ChildProcess & { pid: number };
}

function served(name: string, server: Record<string, unknown>) {
  const tunnel = server.tunnel as { localPort: number } | null;
  const spec = `openai:http://127.0.0.1:${tunnel ? tunnel.localPort : server.port}/v1#m`;
  return { ...servedOnlyModel(name, spec), server };
}

function localServer(pid: unknown, more: Record<string, unknown> = {}) {
  return {
    kind: 'transformers',
    host: 'local',
    pid,
    port: 8001,
    command: ['x'],
    log: '/tmp/x.log',
    tunnel: null,
    ...more,
  };
}

function workspace(...models: unknown[]): string {
  const ws = tempDir('quarry-unload-');
  mkdirSync(join(ws, '.quarry'), { recursive: true });
  writeFileSync(join(ws, '.quarry', 'models.json'), JSON.stringify({ schema: 'quarry.models/1', models }));
  return ws;
}

test('unload does not signal a group Quarry did not start, even with its start time and command line', async () => {
  const victim = await unrelatedSleep();
  const copied = { procStart: procStart(victim.pid)!, cmdline: ['sleep', '1000'], id: 'a'.repeat(32) };
  const ws = workspace(served('plain', localServer(victim.pid)), served('copied', localServer(victim.pid, copied)));
  for (const name of ['plain', 'copied']) {
    const r = quarry(ws, 'checkpoints', 'unload', name);
    assert.equal(termPending(victim.pid), false, `${name}: no SIGTERM was sent to the unrelated group`);
    assert.ok(running(victim.pid));
    assert.notEqual(r.status, 0, r.stdout);
    assert.match(r.stdout, /did not stop the transformers server/);
    assert.match(r.stderr, /kept in \.quarry\/models\.json.*--forget/);
  }
  assert.match(quarry(ws, 'checkpoints', 'unload', 'plain', '--forget').stdout, /unloaded plain/);
  assert.equal(termPending(victim.pid), false);
});

test('a pid the system reused, or running another command, is left alone', async () => {
  const victim = await unrelatedSleep();
  const start = procStart(victim.pid)!;
  const reused = { procStart: String(Number(start) + 1), cmdline: ['sleep', '1000'], id: 'b'.repeat(32) };
  const otherCmd = { procStart: start, cmdline: ['transformers', 'serve'], id: 'b'.repeat(32) };
  const ws = workspace(
    served('reused', localServer(victim.pid, reused)),
    served('other', localServer(victim.pid, otherCmd)),
  );
  const r = quarry(ws, 'checkpoints', 'unload', 'reused');
  assert.equal(termPending(victim.pid), false, 'the reused pid was not signalled');
  assert.match(r.stdout, /was not running: .*now another process, left alone/);
  assert.equal(r.status, 0, 'the server it names is gone: the entry goes');
  const o = quarry(ws, 'checkpoints', 'unload', 'other');
  assert.match(o.stdout, /runs "sleep 1000", not the recorded command/);
  assert.notEqual(o.status, 0);
  assert.equal(termPending(victim.pid), false);
  assert.ok(running(victim.pid));
});

test("a tunnel's pid naming an unrelated group is not signalled", async () => {
  const victim = await unrelatedSleep();
  const server = {
    ...localServer(4_000_000),
    host: 'gpu-box.invalid',
    tunnel: { pid: victim.pid, localPort: 8002 },
  };
  const r = quarry(workspace(served('t', server)), 'checkpoints', 'unload', 't');
  assert.equal(termPending(victim.pid), false, "the tunnel's unrelated group was not signalled");
  assert.match(r.stdout, /did not stop the SSH tunnel \(pid \d+\)/);
});

test('pids and ports that are not a process Quarry started are refused on read, naming the field', () => {
  for (const [field, value] of [
    ['pid', 1],
    ['pid', 0],
    ['pid', -5],
    ['pid', 1.5],
    ['pid', 2 ** 40],
    ['pid', '1; rm -rf ~'],
    ['port', 0],
    ['port', 70000],
  ] as const) {
    const r = quarry(workspace(served('m', localServer(77, { [field]: value }))), 'checkpoints', 'loaded');
    assert.equal(r.status, 2, `${field} ${value}: ${r.stdout}`);
    assert.match(
      r.stderr,
      new RegExp(`models\\.json is not a quarry\\.models/1 registry: models\\[0\\]: server\\.${field}`),
    );
  }
  const tunnel = { ...localServer(77), host: 'gpu', tunnel: { pid: -1, localPort: 8001 } };
  assert.match(quarry(workspace(served('m', tunnel)), 'checkpoints', 'loaded').stderr, /server\.tunnel\.pid must be/);
});

const canUnshare =
  process.getuid?.() === 0 && spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status === 0;

test('"pid": 1 never becomes kill(-1) (in a fresh pid namespace, where kill(-1) reaches only its own processes)', {
  skip: canUnshare ? false : 'needs root and unshare(1) for a private pid namespace',
}, () => {
  const ws = workspace(served('victim', localServer(1)));
  // Pid 1 of the namespace starts a SIGTERM-blocking sleep (pid 2 there), runs unload, reports the sleep's signals.
  const inner = join(ws, 'inner.js');
  writeFileSync(
    inner,
    `const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const sleeper = spawn('python3', ['-c', ${JSON.stringify(BLOCK_TERM_THEN_SLEEP)}], { stdio: 'ignore' });
const cmd = () => fs.readFileSync('/proc/' + sleeper.pid + '/cmdline', 'utf8');
const wait = () => (cmd().startsWith('sleep') ? run() : setTimeout(wait, 20));
function run() {
  const r = spawnSync(process.execPath, [${JSON.stringify(CLI)}, 'checkpoints', 'unload', 'victim'], {
    cwd: ${JSON.stringify(ws)}, encoding: 'utf8', timeout: 60000 });
  const status = fs.readFileSync('/proc/' + sleeper.pid + '/status', 'utf8');
  console.log(JSON.stringify({ code: r.status, out: r.stdout, err: r.stderr, status, self: process.pid }));
  sleeper.kill('SIGKILL');
}
wait();
`,
  );
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, inner], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    code: number;
    err: string;
    status: string;
    self: number;
  };
  assert.equal(got.self, 1, 'the inner script is pid 1 of its namespace');
  const pnd = ['SigPnd', 'ShdPnd'].map((k) => BigInt(`0x${new RegExp(`^${k}:\\s*(\\w+)`, 'm').exec(got.status)![1]}`));
  assert.ok(
    pnd.every((p) => (p & (1n << 14n)) === 0n),
    'no SIGTERM reached the other process of the namespace',
  );
  assert.equal(got.code, 2);
  assert.match(got.err, /server\.pid must be a process id Quarry started: an integer from 2/);
});

test('ssh options and hosts from models.json that would run a command here are refused (real ssh)', async () => {
  const victim = await unrelatedSleep();
  const dir = tempDir('quarry-proxycmd-');
  const marker = join(dir, 'ran');
  const config = join(dir, 'ssh_config');
  writeFileSync(config, `Host *\n  ProxyCommand touch ${marker}\n`);
  const remote = (more: Record<string, unknown>) => ({
    ...localServer(4_000_000, { procStart: '1', id: 'c'.repeat(32) }),
    host: 'gpu-box',
    tunnel: { pid: victim.pid, localPort: 8002 },
    ...more,
  });
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [
      { sshOptions: [`-oProxyCommand=touch ${marker}`] },
      /server\.sshOptions: the ssh option ProxyCommand is not allowed/,
    ],
    [{ sshOptions: ['-o', `ProxyCommand touch ${marker}`] }, /ProxyCommand is not allowed/],
    [{ sshOptions: [`-oLocalCommand=touch ${marker}`, '-oPermitLocalCommand=yes'] }, /LocalCommand is not allowed/],
    [{ sshOptions: [`-oKnownHostsCommand=touch ${marker}`] }, /KnownHostsCommand is not allowed/],
    [{ sshOptions: ['-F', config] }, /the ssh option "-F" is not allowed/],
    [{ sshOptions: [`-F${config}`] }, /is not allowed/],
    [{ sshOptions: ['-J', 'jump'] }, /"-J" is not allowed/],
    [{ host: `-oProxyCommand=touch ${marker}` }, /server\.host must not start with '-'/],
  ];
  for (const [more, said] of cases) {
    const r = quarry(workspace(served('r', remote(more))), 'checkpoints', 'unload', 'r');
    assert.equal(existsSync(marker), false, `${JSON.stringify(more)} ran a command here`);
    assert.equal(termPending(victim.pid), false);
    assert.equal(r.status, 2, `${JSON.stringify(more)}: ${r.stdout}`);
    assert.match(r.stderr, said);
    assert.match(r.stderr, /nothing was signalled/);
  }
});

test('checkpoints list, compare and loaded answer when a file they read is a named pipe', () => {
  const dir = tempDir('quarry-fifo-');
  const ckpt = join(dir, 'checkpoint-2');
  mkdirSync(ckpt);
  writeFileSync(join(ckpt, 'config.json'), '{}');
  writeFileSync(join(ckpt, 'model.safetensors'), '');
  for (const fifo of [join(dir, 'metrics.jsonl'), join(ckpt, 'trainer_state.json')])
    assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
  const r = quarry(dir, 'checkpoints', 'list', dir, '--json');
  assert.equal(r.status, 0, r.stderr);
  const found = (JSON.parse(r.stdout) as { checkpoints: Array<{ step: number; metrics: unknown }> }).checkpoints;
  assert.deepEqual(
    found.map((c) => [c.step, c.metrics]),
    [[2, null]],
  );
  // compare reads each model's report.json, a path models.json names.
  const ws = tempDir('quarry-fifo-');
  const report = join(ws, 'report.json');
  assert.equal(spawnSync('mkfifo', [report]).status, 0);
  const ev = { report, dataset: 'spider:/d/dev.json', protocol: 'skyrl', samples: 1, items: 1, at: 'x' };
  const withEval = (name: string) => ({
    ...served(name, localServer(77)),
    server: null,
    evaluations: [{ ...ev, ex: { greedy: 1, majority: null, passAtK: null } }],
  });
  mkdirSync(join(ws, '.quarry'));
  const doc = { schema: 'quarry.models/1', models: [withEval('a'), withEval('b')] };
  writeFileSync(join(ws, '.quarry', 'models.json'), JSON.stringify(doc));
  const c = quarry(ws, 'checkpoints', 'compare', 'a', 'b', '--dataset', '/d/dev.json');
  assert.equal(c.status, 2);
  assert.match(c.stderr, /report\.json is not a regular file/);
  mkdirSync(join(dir, '.quarry'));
  assert.equal(spawnSync('mkfifo', [join(dir, '.quarry', 'models.json')]).status, 0);
  const l = quarry(dir, 'checkpoints', 'loaded');
  assert.equal(l.status, 2);
  assert.match(l.stderr, /models\.json is not a regular file/);
});
