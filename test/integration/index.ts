// The extension tests' entry point (VS Code's `extensionTestsPath`): VS Code loads this file inside a real extension
// host and calls run(). The same file serves code-server (scripts/editor/run-integration.mjs) and
// @vscode/test-electron (scripts/editor/run-electron.mjs). It runs every *.test.js beside it with mocha's tdd UI, so
// feature tests are `test/integration/<feature>.test.ts` using suite/test from 'mocha' and the real `vscode` API.
import Mocha from 'mocha';
import { appendFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';

function testFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) testFiles(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

/**
 * In a browser workbench the extension host's console reaches the runner mixed with the workbench's own log, so the
 * code-server runner names a file (QUARRY_TEST_LOG) that the reporter writes to as well, and streams that file.
 */
function reportLine(...args: unknown[]): void {
  const file = process.env.QUARRY_TEST_LOG;
  if (file) appendFileSync(file, format(...args) + '\n');
}

export function run(): Promise<void> {
  const base = Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void };
  const consoleLog = base.consoleLog;
  base.consoleLog = (...args: unknown[]) => {
    reportLine(...args);
    consoleLog(...args);
  };
  // QUARRY_TEST_GREP narrows a run to matching test titles (the runners pass --grep through).
  const grep = process.env.QUARRY_TEST_GREP;
  const mocha = new Mocha({
    ui: 'tdd',
    // The extension host forwards console output line by line; colour codes would only garble it.
    color: false,
    reporter: 'spec',
    // UI work in a fresh editor (activation, the native SQLite addon's first load) takes seconds, not milliseconds.
    timeout: 60_000,
    ...(grep ? { grep } : {}),
  });
  const files = testFiles(__dirname);
  return new Promise<void>((resolve, reject) => {
    if (files.length === 0)
      throw new Error(`no *.test.js files under ${__dirname}: run node scripts/build.mjs --tests`);
    for (const f of files) mocha.addFile(f);
    mocha.run((failures) => {
      if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
      else resolve();
    });
  }).catch((err: unknown) => {
    // A test file that fails to load never reaches the reporter: say so where the runner is looking.
    reportLine(err instanceof Error ? (err.stack ?? err.message) : String(err));
    throw err;
  });
}
