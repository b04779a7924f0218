// The training environment check (`quarry doctor`): the interpreter chosen in order, and a real Python probed — a
// virtual environment made here with hand-written distributions: one that imports, one installed but broken, the
// rest missing — so each status and each fix comes from what Python itself reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { choosePython, probePythonEnv, renderPythonEnvReport, venvPython } from '../../../src/core/training/pythonEnv';
import { main } from '../../../src/cli/main';
import { tempDir } from '../../helpers/fixtures';

/** A venv (no pip) with fake distributions: name -> module source. */
function fakeVenv(dists: Record<string, { version: string; module: string; source: string }>): string {
  const dir = join(tempDir('quarry-venv-'), '.venv');
  execFileSync('python3', ['-m', 'venv', '--without-pip', dir]);
  const lib = join(dir, 'lib');
  const site = join(lib, readdirSync(lib).find((d) => d.startsWith('python'))!, 'site-packages');
  for (const [name, d] of Object.entries(dists)) {
    const info = join(site, `${name.replace(/-/g, '_')}-${d.version}.dist-info`);
    mkdirSync(info, { recursive: true });
    writeFileSync(join(info, 'METADATA'), `Metadata-Version: 2.1\nName: ${name}\nVersion: ${d.version}\n`);
    mkdirSync(join(site, d.module), { recursive: true });
    writeFileSync(join(site, d.module, '__init__.py'), d.source);
  }
  return dir;
}

test('the interpreter: flag, then setting, then the Python extension, then the nearest .venv, then python3', () => {
  const venv = fakeVenv({});
  const root = join(venv, '..');
  const nested = join(root, 'a', 'b');
  mkdirSync(nested, { recursive: true });
  assert.deepEqual(choosePython({ flag: '/x/py', setting: '/y/py', pythonExtension: '/z/py', searchRoots: [nested] }), {
    path: '/x/py',
    source: 'flag',
  });
  assert.deepEqual(choosePython({ setting: ' /y/py ', pythonExtension: '/z/py', searchRoots: [nested] }), {
    path: '/y/py',
    source: 'setting',
  });
  assert.deepEqual(choosePython({ setting: '', pythonExtension: '/z/py', searchRoots: [nested] }), {
    path: '/z/py',
    source: 'python-extension',
  });
  assert.deepEqual(choosePython({ searchRoots: [nested] }), { path: venvPython(venv), source: 'venv' });
  assert.equal(choosePython({ searchRoots: [tempDir()] }).source, 'path');
});

test(
  'a probed environment: versions, an engine that is ' + 'installed but does not import, missing ones and their fixes',
  async () => {
    const venv = fakeVenv({
      'quarry-trainer': { version: '0.1.0', module: 'quarry_trainer', source: '' },
      torch: {
        version: '9.9.0',
        module: 'torch',
        source: 'raise ImportError("libtorch_cuda.so: cannot open shared object file")\n',
      },
      transformers: { version: '5.0.0', module: 'transformers', source: '' },
    });
    const report = await probePythonEnv({ path: venvPython(venv), source: 'venv' }, { timeoutMs: 60_000 });
    assert.equal(report.ok, true, report.problem);
    const byName = new Map(report.engines.map((e) => [e.name, e]));
    assert.deepEqual(byName.get('transformers'), {
      name: 'transformers',
      version: '5.0.0',
      imports: true,
      required: true,
      extra: 'trl',
    });
    assert.equal(byName.get('torch')!.version, '9.9.0');
    assert.equal(byName.get('torch')!.imports, false);
    assert.match(byName.get('torch')!.error!, /^ImportError: libtorch_cuda\.so/);
    assert.equal(byName.get('trl')!.version, null);
    assert.equal(byName.get('trl')!.error, 'not installed');
    assert.equal(report.ready, false, 'trl missing and torch broken: not ready');
    assert.equal(report.gpus.torchCuda, null, 'torch does not import, so it reports no GPUs');
    assert.ok(
      report.fixes.some((f) => f.includes('pip install') && f.includes('[trl,verl,skyrl,ray,export]')),
      report.fixes.join('\n'),
    );
    assert.ok(
      report.fixes.some((f) => f.startsWith('torch 9.9.0 is installed but does not import')),
      report.fixes.join('\n'),
    );
    assert.ok(report.notes.some((n) => n.startsWith('skyrl-train needs Python 3.12')));
    const text = renderPythonEnvReport(report);
    assert.match(text, /torch\s+9\.9\.0\s+does not import: ImportError/);
    assert.match(text, /trl\s+-\s+missing \(extra: trl\)\s+\[required\]/);
    assert.match(text, /Not ready/);
  },
);

test('a path with no interpreter, and a program that is not Python, are reports, not exceptions', async () => {
  const missing = await probePythonEnv({ path: join(tempDir(), 'nope', 'python'), source: 'setting' });
  assert.equal(missing.ok, false);
  assert.match(missing.problem!, /no Python interpreter at/);
  assert.equal(missing.ready, false);
  assert.match(renderPythonEnvReport(missing), /problem: no Python interpreter/);
  const notPython = join(tempDir(), 'python');
  writeFileSync(notPython, '#!/bin/sh\necho "not python" >&2\nexit 3\n', { mode: 0o755 });
  const broken = await probePythonEnv({ path: notPython, source: 'flag' });
  assert.equal(broken.ok, false);
  assert.match(broken.problem!, /did not run the probe \(exit 3\): not python/);
  const hang = join(tempDir(), 'python');
  writeFileSync(hang, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
  const slow = await probePythonEnv({ path: hang, source: 'flag' }, { timeoutMs: 300 });
  assert.match(slow.problem!, /did not finish within/);
});

test('quarry doctor --python --json prints the report and exits 1 when not ready, 2 on a bad flag', async () => {
  const venv = fakeVenv({ 'quarry-trainer': { version: '0.1.0', module: 'quarry_trainer', source: '' } });
  let out = '';
  const stdout = new Writable({
    write(c, _e, cb) {
      out += String(c);
      cb();
    },
  });
  const stderr = new Writable({
    write(_c, _e, cb) {
      cb();
    },
  });
  const code = await main(['doctor', '--python', venvPython(venv), '--json'], { stdout, stderr, cwd: process.cwd() });
  assert.equal(code, 1);
  const report = JSON.parse(out) as { python: { source: string }; engines: { name: string; imports: boolean }[] };
  assert.equal(report.python.source, 'flag');
  assert.equal(report.engines.find((e) => e.name === 'quarry-trainer')!.imports, true);
  assert.equal(await main(['doctor', '--timeout-ms', 'soon'], { stdout, stderr, cwd: process.cwd() }), 2);
});
