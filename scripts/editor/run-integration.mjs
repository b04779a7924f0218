#!/usr/bin/env node
// Runs the integration tests (test/integration/*.test.ts, mocha tdd) inside a real VS Code extension host, offline:
// code-server on a free loopback port with fresh state dirs, the sample workspace, Debian's Chromium opening the
// workbench with VS Code's extension-test `payload`. Streams the test log to stdout and exits with the tests' code.
//   node scripts/editor/run-integration.mjs [--no-build] [--grep TEXT] [--timeout SECONDS] [--keep] [--verbose]
// QUARRY_OUT picks the transpiled tree (default out). --keep leaves the temp dir (workspace, logs) for a look;
// --verbose also prints the workbench's own log (always kept in <temp>/workbench.log, its tail printed on failure).
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import {
  build,
  ensureCodeServer,
  enableSmokeTestDriverScript,
  folderUrl,
  launchChromium,
  makeTempDir,
  prepareWorkspace,
  removeDir,
  root,
  since,
  startCodeServer,
  stateDirs,
} from './lib.mjs';

const argv = process.argv.slice(2);
const opt = { build: true, grep: undefined, timeoutS: 600, keep: false, verbose: false };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--no-build') opt.build = false;
  else if (a === '--keep') opt.keep = true;
  else if (a === '--verbose') opt.verbose = true;
  else if (a === '--grep' && i + 1 < argv.length) opt.grep = argv[++i];
  else if (a === '--timeout' && /^\d+$/.test(argv[i + 1] ?? '')) opt.timeoutS = Number(argv[++i]);
  else {
    process.stderr.write(
      `run-integration: unknown or incomplete argument ${JSON.stringify(a)}\n` +
        'usage: node scripts/editor/run-integration.mjs [--no-build] [--grep TEXT] [--timeout SECONDS] ' +
        '[--keep] [--verbose]\n',
    );
    process.exit(2);
  }
}

const outDir = resolve(root, process.env.QUARRY_OUT || 'out');
const say = (msg) => process.stdout.write(`[integration] ${msg}\n`);

let server;
let browser;
let temp;
let finished = false;

async function teardown() {
  if (browser) await browser.close().catch(() => {});
  if (server) await server.stop();
  if (temp && !opt.keep) removeDir(temp);
  else if (temp) say(`kept ${temp}`);
}

async function main() {
  const t0 = Date.now();
  if (opt.build) {
    build({ tests: true });
    say(`built in ${since(t0)} s`);
  }
  const testsIndex = join(outDir, 'test', 'integration', 'index.js');
  if (!existsSync(testsIndex))
    throw new Error(
      `${testsIndex} is missing: run node scripts/build.mjs --tests (QUARRY_OUT=${process.env.QUARRY_OUT || 'out'})`,
    );
  if (!existsSync(join(root, 'dist', 'extension.js')))
    throw new Error('dist/extension.js is missing: run node scripts/build.mjs');
  const entry = ensureCodeServer();

  temp = makeTempDir('quarry-integration-');
  const dirs = stateDirs(temp);
  const workspace = join(temp, 'workspace');
  prepareWorkspace(workspace);

  const testLog = join(temp, 'test.log');
  const workbenchLog = join(temp, 'workbench.log');
  writeFileSync(testLog, '');
  const tServer = Date.now();
  server = await startCodeServer({
    entry,
    dirs,
    workspace,
    // The extension host inherits code-server's environment: index.ts writes the reporter's lines to QUARRY_TEST_LOG.
    env: { QUARRY_TEST_LOG: testLog, ...(opt.grep ? { QUARRY_TEST_GREP: opt.grep } : {}) },
  });
  say(`code-server answered ${server.url}/healthz in ${since(tServer)} s`);

  browser = await launchChromium();
  const page = await browser.newPage();
  let resolveExit;
  const exitCode = new Promise((res) => {
    resolveExit = res;
  });
  await page.exposeFunction('codeAutomationExit', (code, logs) => {
    // The workbench hands over its log files at exit: keep them for a failing run.
    if (code !== 0 && Array.isArray(logs)) {
      const logDir = join(temp, 'workbench-logs');
      for (const { relativePath, contents } of logs) {
        const file = join(logDir, relativePath);
        mkdirSync(resolve(file, '..'), { recursive: true });
        writeFileSync(file, contents);
      }
      opt.keep = true;
      say(`workbench logs in ${logDir}`);
    }
    resolveExit(typeof code === 'number' ? code : 1);
  });
  await page.exposeFunction('codeAutomationLog', (type, message) => {
    const line = `[${type}] ${formatLogMessage(message)}\n`;
    appendFileSync(workbenchLog, line);
    if (opt.verbose) process.stdout.write(line);
  });
  const stream = streamFile(testLog);
  await page.addInitScript(enableSmokeTestDriverScript);
  page.on('pageerror', (err) => say(`page error: ${err.message}`));

  const authority = `127.0.0.1:${server.port}`;
  const url = folderUrl(server.url, workspace, [
    ['extensionDevelopmentPath', `vscode-remote://${authority}${root}`],
    ['extensionTestsPath', `vscode-remote://${authority}${testsIndex}`],
  ]);
  const tTests = Date.now();
  // The workbench can take long to load on a busy machine; the test timeout below bounds the whole run.
  await page.goto(url, { timeout: 180_000 });
  let timer;
  const timeout = new Promise((res) => {
    timer = setTimeout(() => {
      say(`no exit code after ${opt.timeoutS} s: the tests hung or the workbench never started them`);
      res(124);
    }, opt.timeoutS * 1000);
  });
  const code = await Promise.race([exitCode, timeout]);
  clearTimeout(timer);
  stream.stop();
  // Tests that never reported (the host failed to start, a test file did not load) leave only the workbench's word.
  if (code !== 0 && !opt.verbose && readFileSync(testLog, 'utf8').trim() === '' && existsSync(workbenchLog)) {
    const tail = readFileSync(workbenchLog, 'utf8').trimEnd().split('\n').slice(-40);
    say(`last lines of the workbench log (${workbenchLog}):\n${tail.join('\n')}`);
    opt.keep = true;
  }
  say(`tests exited with ${code} after ${since(tTests)} s (total ${since(t0)} s)`);
  return code;
}

/** The workbench logs console calls as a JSON array of console.log arguments (format string first). */
function formatLogMessage(message) {
  if (Array.isArray(message)) return format(...message);
  if (typeof message !== 'string') return JSON.stringify(message);
  try {
    const args = JSON.parse(message);
    if (Array.isArray(args)) return format(...args);
  } catch {
    /* a plain line */
  }
  return message;
}

/** Copies what is appended to `file` to stdout as it arrives, until stop() (which flushes the rest). */
function streamFile(file) {
  let offset = 0;
  const flush = () => {
    const buf = readFileSync(file);
    if (buf.length > offset) {
      process.stdout.write(buf.subarray(offset));
      offset = buf.length;
    }
  };
  const timer = setInterval(flush, 200);
  return {
    stop() {
      clearInterval(timer);
      flush();
    },
  };
}

function onSignal(sig) {
  if (finished) return;
  finished = true;
  say(`${sig}: stopping`);
  teardown().finally(() => process.exit(130));
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

let code = 1;
try {
  code = await main();
} catch (err) {
  process.stderr.write(`[integration] ${err instanceof Error ? err.stack || err.message : err}\n`);
  code = 1;
} finally {
  if (!finished) {
    finished = true;
    await teardown();
  }
}
process.exit(code);
