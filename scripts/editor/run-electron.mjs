#!/usr/bin/env node
// Runs the same integration tests (test/integration/*.test.ts) in desktop VS Code through @vscode/test-electron,
// the standard runner, on machines that can download VS Code (or have one: QUARRY_VSCODE_EXECUTABLE=/path/to/code).
// Offline (as on the project's build machines) the download fails; use scripts/editor/run-integration.mjs, which runs
// the same files inside code-server.
//   node scripts/editor/run-electron.mjs [--no-build] [--grep TEXT] [--version stable|insiders|1.90.0]
import { join, resolve } from 'node:path';
import { existsSync, writeFileSync } from 'node:fs';
import { build, makeTempDir, prepareWorkspace, removeDir, root, since, stateDirs } from './lib.mjs';

const argv = process.argv.slice(2);
const opt = { build: true, grep: undefined, version: process.env.QUARRY_VSCODE_VERSION || 'stable' };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--no-build') opt.build = false;
  else if (a === '--grep' && i + 1 < argv.length) opt.grep = argv[++i];
  else if (a === '--version' && i + 1 < argv.length) opt.version = argv[++i];
  else {
    process.stderr.write(
      `run-electron: unknown or incomplete argument ${JSON.stringify(a)}\n` +
        'usage: node scripts/editor/run-electron.mjs [--no-build] [--grep TEXT] [--version stable|insiders|X.Y.Z]\n',
    );
    process.exit(2);
  }
}
const say = (msg) => process.stdout.write(`[electron] ${msg}\n`);
const outDir = resolve(root, process.env.QUARRY_OUT || 'out');

const t0 = Date.now();
if (opt.build) build({ tests: true });
const extensionTestsPath = join(outDir, 'test', 'integration', 'index.js');
if (!existsSync(extensionTestsPath)) {
  process.stderr.write(`run-electron: ${extensionTestsPath} is missing: run node scripts/build.mjs --tests\n`);
  process.exit(1);
}

const { runTests, downloadAndUnzipVSCode } = await import('@vscode/test-electron');
const temp = makeTempDir('quarry-electron-');
const dirs = stateDirs(temp);
const workspace = join(temp, 'workspace');
prepareWorkspace(workspace);
let code = 1;
try {
  let vscodeExecutablePath = process.env.QUARRY_VSCODE_EXECUTABLE;
  if (!vscodeExecutablePath) {
    try {
      vscodeExecutablePath = await downloadAndUnzipVSCode({
        version: opt.version,
        cachePath: join(root, '.cache', 'vscode-test'),
      });
    } catch (err) {
      process.stderr.write(
        `run-electron: could not download VS Code ${opt.version} (${err instanceof Error ? err.message : err}).\n` +
          '  @vscode/test-electron fetches VS Code from update.code.visualstudio.com, which this machine ' +
          'cannot reach.\n' +
          '  Either set QUARRY_VSCODE_EXECUTABLE to an installed VS Code binary, or run the same tests offline in\n' +
          '  code-server: node scripts/editor/run-integration.mjs (npm run test:integration).\n',
      );
      process.exitCode = 1;
      throw Object.assign(new Error('download failed'), { reported: true });
    }
  }
  // The reporter's lines go to the terminal through the extension host's console; the log file is kept as well.
  const testLog = join(temp, 'test.log');
  writeFileSync(testLog, '');
  code = await runTests({
    vscodeExecutablePath,
    extensionDevelopmentPath: root,
    extensionTestsPath,
    extensionTestsEnv: { QUARRY_TEST_LOG: testLog, ...(opt.grep ? { QUARRY_TEST_GREP: opt.grep } : {}) },
    launchArgs: [
      workspace,
      '--user-data-dir',
      dirs.userData,
      '--extensions-dir',
      dirs.extensions,
      '--disable-workspace-trust',
      '--disable-telemetry',
      '--skip-welcome',
      '--skip-release-notes',
    ],
  }).then(
    () => 0,
    (err) => {
      say(`tests failed: ${err instanceof Error ? err.message : err}`);
      return 1;
    },
  );
  say(`exit ${code} after ${since(t0)} s`);
} catch (err) {
  if (!err?.reported) process.stderr.write(`run-electron: ${err instanceof Error ? err.stack : err}\n`);
  code = 1;
} finally {
  removeDir(temp);
}
process.exit(code);
