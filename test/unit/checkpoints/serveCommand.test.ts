// The commands that serve a checkpoint and reach it over SSH, as built: the servers' own flags (transformers serve,
// vllm serve, sglang), loopback binding, the tunnel's ssh options and the keeper loop that reopens it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { defaultServerKind, serveCommand } from '../../../src/app/checkpoints/serveCommand';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  remoteHfCheckArgs,
  remoteRunArgs,
  remoteStartArgs,
  remoteStopArgs,
  tunnelArgs,
  tunnelKeeperArgv,
} from '../../../src/app/checkpoints/sshTunnel';

test('transformers serve pins the checkpoint, binds loopback, runs on the CPU; requests name the path', () => {
  const c = serveCommand({
    kind: 'transformers',
    checkpoint: '/c/ck-2',
    name: 'm',
    port: 8123,
    python: '/v/bin/python',
  });
  assert.deepEqual(c.argv, [
    '/v/bin/transformers',
    'serve',
    '/c/ck-2',
    '--host',
    '127.0.0.1',
    '--port',
    '8123',
    '--device',
    'cpu',
  ]);
  assert.equal(c.modelName, '/c/ck-2');
  assert.equal(c.healthPath, '/health');
});

test('vllm serve and sglang answer to the registry name', () => {
  const v = serveCommand({ kind: 'vllm', checkpoint: '/c', name: 'sft-2', port: 9000, python: 'python' });
  assert.deepEqual(v.argv, [
    'vllm',
    'serve',
    '/c',
    '--served-model-name',
    'sft-2',
    '--host',
    '127.0.0.1',
    '--port',
    '9000',
  ]);
  assert.equal(v.modelName, 'sft-2');
  const s = serveCommand({ kind: 'sglang', checkpoint: '/c', name: 'sft-2', port: 9000, python: 'py' });
  assert.deepEqual(s.argv.slice(0, 5), ['py', '-m', 'sglang.launch_server', '--model-path', '/c']);
  assert.equal(defaultServerKind(true), 'vllm');
  assert.equal(defaultServerKind(false), 'transformers');
});

test('the tunnel forwards loopback to loopback, fails on a bad forward and notices a dead link', () => {
  const a = tunnelArgs({ host: 'gpu-box', localPort: 5001, remotePort: 8000, sshOptions: ['-p', '2222'] });
  assert.deepEqual(a, [
    '-N',
    '-L',
    '127.0.0.1:5001:127.0.0.1:8000',
    '-o',
    'ExitOnForwardFailure=yes',
    '-o',
    'ServerAliveInterval=15',
    '-o',
    'ServerAliveCountMax=3',
    '-o',
    'BatchMode=yes',
    '-p',
    '2222',
    '--',
    'gpu-box',
  ]);
});

test('the keeper loop reopens ssh after it exits, with its arguments quoted for bash', () => {
  const argv = tunnelKeeperArgv({ host: 'me@host', localPort: 1, remotePort: 2, sshOptions: ['-i', "/k/it's key"] });
  assert.equal(argv[0], 'bash');
  assert.match(
    argv[2],
    /^while :; do ssh -N -L 127\.0\.0\.1:1:127\.0\.0\.1:2 .* -i '\/k\/it'\\''s key' -- me@host; sleep 2; done$/,
  );
  // bash parses it back into the same words: print them instead of running ssh.
  const words = spawnSync(
    'bash',
    ['-c', argv[2].replace(/^while :; do ssh /, 'printf "%s\\n" ').replace(/; sleep.*$/, '')],
    {
      encoding: 'utf8',
    },
  )
    .stdout.trim()
    .split('\n');
  assert.deepEqual(words.slice(-4), ['-i', "/k/it's key", '--', 'me@host']);
});

test('the remote start and stop commands put the host after -- and run under sh on the host', () => {
  const start = remoteStartArgs('h', ['transformers', 'serve', '/c k'], '/tmp/q.log', ['-p', '22']);
  assert.deepEqual(start.slice(0, 5), ['-o', 'BatchMode=yes', '-p', '22', '--']);
  assert.equal(start[5], 'h');
  assert.match(start[6], /^sh -c '.*setsid nohup transformers serve '\\''\/c k'\\'' > \/tmp\/q\.log 2>&1/);
  const stop = remoteStopArgs('h', 42, { procStart: '123', idVar: 'QUARRY_SERVER_ID', id: 'a'.repeat(32) });
  assert.deepEqual(stop.slice(0, 4), ['-o', 'BatchMode=yes', '--', 'h']);
  assert.match(stop[4], /^sh -c '/);
});

test('the remote run passes its environment and quoted arguments to the shell on the host', () => {
  const args = remoteRunArgs('h', ['python3', '-c', 'import os, sys; print(os.environ["Q"], sys.argv[1])', "a b'c"], {
    Q: 'x y',
  });
  assert.deepEqual(args.slice(0, 4), ['-o', 'BatchMode=yes', '--', 'h']);
  // What ssh hands the host's shell, run by a shell here.
  const r = spawnSync('sh', ['-c', args[4]], { encoding: 'utf8' });
  assert.equal(r.stdout, "x y a b'c\n", r.stderr);
});

test('the remote checkpoint check answers yes for config.json and weights, no for anything else', () => {
  const dir = mkdtempSync(join(tmpdir(), 'q ckpt-'));
  const ask = () => spawnSync('sh', ['-c', remoteHfCheckArgs('h', dir)[4]], { encoding: 'utf8' }).stdout.trim();
  assert.equal(ask(), 'no');
  writeFileSync(join(dir, 'config.json'), '{}');
  assert.equal(ask(), 'no', 'config.json alone');
  writeFileSync(join(dir, 'model.safetensorsX'), '');
  assert.equal(ask(), 'no', 'not a weights file name');
  writeFileSync(join(dir, 'model-00001-of-00002.safetensors'), '');
  assert.equal(ask(), 'yes');
  assert.equal(
    spawnSync('sh', ['-c', remoteHfCheckArgs('h', join(dir, 'gone'))[4]], { encoding: 'utf8' }).stdout.trim(),
    'no',
  );
});
