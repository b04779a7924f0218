#!/usr/bin/env node
// Runs the end-to-end specs (test/e2e/*.e2e.ts) against the PACKAGED extension: builds dist/ and the transpiled tests,
// packages quarry-<version>.vsix, makes sure code-server and Chromium are there, then runs every spec with node's
// test runner, one at a time (each starts its own code-server and browser). Screenshots land in
// test-artifacts/screenshots/, workbench logs in test-artifacts/logs/.
//   node scripts/editor/run-e2e.mjs [--no-build] [--no-package] [SPEC_NAME ...]   e.g. `smoke` for smoke.e2e.ts
// QUARRY_OUT picks the transpiled tree (default out); QUARRY_E2E_KEEP=1 keeps each editor's temp dir;
// QUARRY_E2E_HEADED=1 shows the browser (needs a display).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { build, ensureCodeServer, packageVsix, root, since } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = { build: true, package: true, only: [] };
for (const a of argv) {
  if (a === '--no-build') opt.build = false;
  else if (a === '--no-package') opt.package = false;
  else if (/^[\w-]+$/.test(a)) opt.only.push(a);
  else {
    process.stderr.write(
      `run-e2e: unknown argument ${JSON.stringify(a)}\n` +
        'usage: node scripts/editor/run-e2e.mjs [--no-build] [--no-package] [SPEC_NAME ...]\n',
    );
    process.exit(2);
  }
}
const say = (msg) => process.stdout.write(`[e2e] ${msg}\n`);
const outDir = resolve(root, process.env.QUARRY_OUT || 'out');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// One VSIX per transpiled tree (.cache/vsix/<out dir name>/, which a rebuild does not wipe): several runs in one
// working tree never install a VSIX another run is rewriting (`npm run package` writes quarry-<version>.vsix at the
// root).
const vsix = process.env.QUARRY_VSIX || join(root, '.cache', 'vsix', basename(outDir), `quarry-${version}.vsix`);

const t0 = Date.now();
if (opt.build) {
  build({ tests: true });
  say(`built in ${since(t0)} s`);
}
if (opt.package) {
  const tp = Date.now();
  try {
    mkdirSync(dirname(vsix), { recursive: true });
    await packageVsix(vsix);
  } catch (err) {
    process.stderr.write(`run-e2e: ${err.message}\n`);
    process.exit(1);
  }
  say(`packaged ${vsix} in ${since(tp)} s`);
}
if (!existsSync(vsix)) {
  process.stderr.write(`run-e2e: ${vsix} is missing: drop --no-package (or set QUARRY_VSIX to a packaged extension)\n`);
  process.exit(1);
}
ensureCodeServer();

const specDir = join(outDir, 'test', 'e2e');
const specs = (existsSync(specDir) ? readdirSync(specDir) : [])
  .filter((f) => f.endsWith('.e2e.js'))
  .filter((f) => opt.only.length === 0 || opt.only.includes(f.replace(/\.e2e\.js$/, '')))
  .sort()
  .map((f) => join(specDir, f));
if (specs.length === 0) {
  process.stderr.write(
    `run-e2e: no specs${opt.only.length ? ` named ${opt.only.join(', ')}` : ''} in ${specDir} (run node ` +
      `scripts/build.mjs --tests)\n`,
  );
  process.exit(1);
}

// Every editor this run starts carries the token in its temp dir name, so leftovers can be found and named.
const run = randomBytes(4).toString('hex');
const tRun = Date.now();
const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...specs], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, QUARRY_VSIX: vsix, QUARRY_E2E_RUN: run },
});
const stopChild = (sig) => child.kill(sig);
process.on('SIGINT', stopChild);
process.on('SIGTERM', stopChild);
const code = await new Promise((res) => child.on('exit', (c, s) => res(c ?? (s ? 1 : 0))));
say(`${specs.length} spec file(s) finished with ${code} in ${since(tRun)} s (total ${since(t0)} s)`);

/** Processes whose command line names this run's temp dirs: code-server or Chromium that teardown missed. */
function leftovers() {
  const found = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmd.includes(`quarry-e2e-${run}-`))
        found.push({ pid: Number(pid), cmd: cmd.slice(0, 160), exe: readlinkSync(`/proc/${pid}/exe`) });
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}
const left = leftovers();
if (left.length > 0) {
  for (const p of left) {
    say(`left behind: pid ${p.pid} ${p.cmd}`);
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  say('teardown left processes behind (killed now): that is a harness bug');
  process.exit(code || 1);
}
process.exit(code);
