#!/usr/bin/env node
// `npm run editor`: the real editor in one command. Builds the extension, makes sure code-server is installed, and
// serves VS Code on 127.0.0.1 with Quarry and a sample workspace (the editor tests' databases plus the bookshop
// sample); open the printed URL in a browser. Ctrl-C stops everything.
//   node scripts/editor/editor.mjs [--port N] [--vsix] [--fresh] [--no-build] [--workspace DIR]
// By default the extension is this working tree, linked (rebuild with `npm run build` and reload the window to see a
// change); --vsix packages it and installs the VSIX instead, as a user gets it. The workspace and the editor's state
// live in .cache/editor/ and survive restarts (labels, trajectories, settings); --fresh starts them over.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  build,
  ensureCodeServer,
  folderUrl,
  installExtension,
  packageVsix,
  prepareWorkspace,
  root,
  since,
  startCodeServer,
  stateDirs,
} from './lib.mjs';

const usage = 'usage: node scripts/editor/editor.mjs [--port N] [--vsix] [--fresh] [--no-build] [--workspace DIR]';
const argv = process.argv.slice(2);
const opt = { port: undefined, vsix: false, fresh: false, build: true, workspace: undefined };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--vsix') opt.vsix = true;
  else if (a === '--fresh') opt.fresh = true;
  else if (a === '--no-build') opt.build = false;
  else if (a === '--port' && /^\d+$/.test(argv[i + 1] ?? '')) opt.port = Number(argv[++i]);
  else if (a === '--workspace' && argv[i + 1]) opt.workspace = resolve(argv[++i]);
  else if (a === '--help' || a === '-h') {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  } else {
    process.stderr.write(`editor: unknown or incomplete argument ${JSON.stringify(a)}\n${usage}\n`);
    process.exit(2);
  }
}
const say = (msg) => process.stdout.write(`[editor] ${msg}\n`);

const t0 = Date.now();
if (opt.build) build();
const base = join(process.env.QUARRY_CACHE || join(root, '.cache'), 'editor');
if (opt.fresh) rmSync(base, { recursive: true, force: true });
const dirs = stateDirs(join(base, 'state'));
// The user opens the URL in their own browser: Chromium is only for the tests.
const entry = ensureCodeServer({ browser: false });

const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const installed = join(dirs.extensions, `quarry.quarry-${version}`);
// Whatever was there (a link or an older install) is replaced, so the editor runs what this command was asked for.
for (const n of existsSync(dirs.extensions) ? readdirSync(dirs.extensions) : []) {
  if (n.startsWith('quarry.quarry-')) rmSync(join(dirs.extensions, n), { recursive: true, force: true });
}
rmSync(join(dirs.extensions, 'extensions.json'), { force: true });
if (opt.vsix) {
  const vsix = join(root, `quarry-${process.platform}-${process.arch}-${version}.vsix`);
  await packageVsix(vsix);
  installExtension(entry, dirs, vsix);
  say(`installed ${vsix}`);
} else {
  symlinkSync(root, installed, 'dir');
  say(`linked the working tree as ${installed}`);
}

// First run only, so the user's own changes stay: a calm window, and no offer to open the repository the cache
// folder sits in.
const userSettings = join(dirs.userData, 'User', 'settings.json');
if (!existsSync(userSettings)) {
  mkdirSync(dirname(userSettings), { recursive: true });
  writeFileSync(
    userSettings,
    JSON.stringify(
      {
        'workbench.startupEditor': 'none',
        'git.openRepositoryInParentFolders': 'never',
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
      },
      null,
      2,
    ) + '\n',
  );
}

let workspace = opt.workspace;
if (!workspace) {
  workspace = join(base, 'workspace');
  if (!existsSync(join(workspace, 'data', 'clinic.sqlite'))) {
    // The bundled tiny ONNX model answers offline with no setup (code-server has no vscode.lm chat models);
    // "Quarry: Switch Model…" changes it.
    prepareWorkspace(workspace, { samples: true, settings: { 'quarry.model.backend': 'onnx' } });
    say(`sample workspace built in ${workspace}`);
  }
} else if (!existsSync(workspace)) {
  mkdirSync(workspace, { recursive: true });
}

const server = await startCodeServer({
  entry,
  dirs,
  workspace,
  port: opt.port,
  onOutput: process.env.QUARRY_EDITOR_VERBOSE ? (line) => process.stderr.write(`[code-server] ${line}\n`) : undefined,
});
say(`ready in ${since(t0)} s. Open in a browser:\n\n    ${folderUrl(server.url, workspace)}\n`);
say('Ctrl-C stops code-server.');

let stopping = false;
async function shutdown(sig) {
  if (stopping) return;
  stopping = true;
  say(`${sig}: stopping code-server`);
  await server.stop();
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
server.proc.on('exit', (code, signal) => {
  if (stopping) return;
  say(`code-server exited on its own (${code ?? signal}); last output:\n${server.output.join('\n')}`);
  process.exit(code || 1);
});
