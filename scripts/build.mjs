// Builds everything the extension, the CLI and the tests run from.
//   node scripts/build.mjs           -> dist/ bundles + sample databases
//   node scripts/build.mjs --tests   -> also out/ (src and test transpiled file by file, for node --test)
// QUARRY_OUT=out-x puts the transpiled tree elsewhere, so several checkouts' test runs in one tree never clash.
import { build } from 'esbuild';
import { readdirSync, statSync, existsSync, rmSync, mkdirSync, readFileSync } from 'node:fs';
import { join, dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const require = createRequire(import.meta.url);

// Native and host-provided modules are loaded at run time, never bundled.
const external = ['vscode', 'better-sqlite3', 'onnxruntime-node'];

function walk(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

async function bundles() {
  const common = {
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    sourcemap: true,
    external,
    logLevel: 'warning',
    absWorkingDir: root,
  };
  // Each entry is its own file because the SQL worker is started as a separate process by path.
  const entries = [
    ['src/extension/extension.ts', 'dist/extension.js'],
    ['src/cli/run.ts', 'dist/cli.js'],
    ['src/core/db/sqlWorker.ts', 'dist/sqlWorker.js'],
    // The OpenAI-compatible replay server, for `node scripts/replay-server.mjs` (benchmarks, e2e runs).
    ['test/support/openaiReplayServer.ts', 'dist/replayServer.js'],
    ['src/core/models/onnx/worker.ts', 'dist/onnxWorker.js'],
    ['src/core/agent/feedback/judgeWorker.ts', 'dist/judgeWorker.js'],
  ];
  // Benchmarks run the bundled code, as users do: bench/<name>.bench.ts -> dist/bench/<name>.js
  for (const f of existsSync(join(root, 'bench')) ? readdirSync(join(root, 'bench')) : []) {
    if (f.endsWith('.bench.ts')) entries.push([`bench/${f}`, `dist/bench/${f.replace(/\.bench\.ts$/, '.js')}`]);
  }
  // The extension's bundle notes when it started loading, so activation is timed from its first line (extension.ts).
  const banner = { 'dist/extension.js': 'globalThis.__quarryLoadStart = performance.now();' };
  // The extension's bundle is parsed on every activation: whitespace goes (names and syntax stay, the source map
  // keeps stack traces readable).
  const extra = { 'dist/extension.js': { minifyWhitespace: true } };
  await Promise.all(
    entries
      .filter(([src]) => existsSync(join(root, src)))
      .map(([src, out]) =>
        build({
          ...common,
          ...extra[out],
          entryPoints: [src],
          outfile: out,
          ...(banner[out] ? { banner: { js: banner[out] } } : {}),
        }),
      ),
  );
  // Webview apps: webview/<app>/main.ts -> dist/webview/<app>.js, for the browser inside a VS Code webview.
  const webviewDir = join(root, 'webview');
  const apps = existsSync(webviewDir)
    ? readdirSync(webviewDir).filter((d) => existsSync(join(webviewDir, d, 'main.ts')))
    : [];
  await Promise.all(
    apps.map((app) =>
      build({
        bundle: true,
        platform: 'browser',
        format: 'iife',
        target: 'es2022',
        sourcemap: true,
        logLevel: 'warning',
        absWorkingDir: root,
        entryPoints: [`webview/${app}/main.ts`],
        outfile: `dist/webview/${app}.js`,
      }),
    ),
  );
}

// The extension's bundle loads on activation: it stays small (node-sql-parser's SQLite-only build, not every dialect;
// native modules external). A dependency that would drag in megabytes fails the build instead of shipping.
const BUNDLE_LIMITS = { 'dist/extension.js': 1.5 * 1024 * 1024 };

function checkBundleSizes() {
  for (const [file, limit] of Object.entries(BUNDLE_LIMITS)) {
    const size = statSync(join(root, file)).size;
    if (size > limit) {
      console.error(
        `build: ${file} is ${(size / 1048576).toFixed(2)} MB, over its ${(limit / 1048576).toFixed(1)} MB limit ` +
          '(esbuild --analyze shows what is in it)',
      );
      process.exit(1);
    }
  }
}

const outDir = process.env.QUARRY_OUT || 'out';

async function transpileForTests() {
  rmSync(join(root, outDir), { recursive: true, force: true });
  // webview/ too: the apps' protocol and state modules are plain TypeScript that unit tests import; and the tiny
  // model's question templates (scripts/tiny-model), whose teacher the unit tests check.
  const files = [
    ...walk(join(root, 'src')),
    ...walk(join(root, 'test')),
    ...walk(join(root, 'webview')),
    ...walk(join(root, 'scripts', 'tiny-model')),
  ]
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => relative(root, f));
  await build({
    entryPoints: files,
    outdir: outDir,
    outbase: '.',
    absWorkingDir: root,
    bundle: false,
    platform: 'node',
    format: 'cjs',
    target: 'node22',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
}

// Sample databases ship with the extension but are built from the project's own SQL scripts.
function sampleDatabases() {
  const Database = require('better-sqlite3');
  const dir = join(root, 'media', 'samples');
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.sql'))) {
    const sqlPath = join(dir, f);
    const dbPath = sqlPath.replace(/\.sql$/, '.sqlite');
    if (existsSync(dbPath) && statSync(dbPath).mtimeMs >= statSync(sqlPath).mtimeMs) continue;
    rmSync(dbPath, { force: true });
    const db = new Database(dbPath);
    db.exec(readFileSync(sqlPath, 'utf8'));
    db.close();
  }
}

mkdirSync(join(root, 'dist'), { recursive: true });
sampleDatabases();
await bundles();
checkBundleSizes();
if (args.has('--tests')) await transpileForTests();
