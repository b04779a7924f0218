// Packages a per-platform VSIX, as VS Code's marketplace expects for extensions with native modules:
//   node scripts/package.mjs [--target linux-x64] [--out FILE]        (npm run package: this machine's platform)
// The VSIX carries the target's binaries of better-sqlite3 and onnxruntime-node and no other platform's. The ignore
// file vsce applies is .vscodeignore (a whitelist) with its "every platform" native-module lines narrowed to the
// target, written to .cache/. A linux-x64 VSIX over 40 MB fails the script.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * VS Code targets whose platform both native modules ship binaries for (onnxruntime-node has no musl or Intel-mac
 * build).
 */
export const TARGETS = {
  'linux-x64': { os: 'linux', arch: 'x64', sqlite: 'linux-x64' },
  'linux-arm64': { os: 'linux', arch: 'arm64', sqlite: 'linux-arm64' },
  'win32-x64': { os: 'win32', arch: 'x64', sqlite: 'win32-x64' },
  'win32-arm64': { os: 'win32', arch: 'arm64', sqlite: 'win32-arm64' },
  'darwin-arm64': { os: 'darwin', arch: 'arm64', sqlite: 'darwin-arm64' },
};
const SIZE_LIMITS = { 'linux-x64': 40 * 1024 * 1024 };

/** .vscodeignore with the native modules' every-platform patterns narrowed to one target. */
export function ignoreFileFor(target, text = readFileSync(join(root, '.vscodeignore'), 'utf8')) {
  const t = TARGETS[target];
  if (!t) throw new Error(`unknown target '${target}'; one of ${Object.keys(TARGETS).join(', ')}`);
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '!node_modules/better-sqlite3/prebuilds/**') {
      out.push(`!node_modules/better-sqlite3/prebuilds/${t.sqlite}.node`);
    } else if (line.startsWith('!node_modules/onnxruntime-node/bin/napi-v6/win32/*/')) {
      if (t.os === 'win32') out.push(line.replace('/win32/*/', `/win32/${t.arch}/`));
    } else if (line.startsWith('!node_modules/onnxruntime-node/bin/napi-v6/*/*/')) {
      out.push(line.replace('/napi-v6/*/*/', `/napi-v6/${t.os}/${t.arch}/`));
    } else {
      out.push(line);
    }
  }
  return out.join('\n');
}

function hostTarget() {
  const key = `${process.platform}-${process.arch}`;
  if (!TARGETS[key]) throw new Error(`no VSIX target for this machine (${key}); pass --target`);
  return key;
}

/** Builds the VSIX for `target` into `out`; returns its size in bytes. */
export function packageTarget(target, out) {
  const ignore = join(root, '.cache', `vscodeignore-${target}`);
  mkdirSync(dirname(ignore), { recursive: true });
  writeFileSync(ignore, ignoreFileFor(target));
  const vsce = join(root, 'node_modules', '@vscode', 'vsce', 'vsce');
  execFileSync(
    process.execPath,
    // The README's relative image links stay as written (there is no repository URL to rewrite them against).
    [vsce, 'package', '--allow-missing-repository', '--no-rewrite-relative-links', '--target', target].concat([
      '--ignoreFile',
      ignore,
      '--out',
      out,
    ]),
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  const size = statSync(out).size;
  const limit = SIZE_LIMITS[target];
  if (limit && size > limit) {
    throw new Error(`${out} is ${(size / 1048576).toFixed(1)} MB, over the ${limit / 1048576} MB limit for ${target}`);
  }
  return size;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const opt = (name) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const target = opt('--target') ?? hostTarget();
  const { version, name } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const out = resolve(opt('--out') ?? `${name}-${target}-${version}.vsix`);
  try {
    const size = packageTarget(target, out);
    console.log(`${out} (${target}, ${(size / 1048576).toFixed(1)} MB)`);
  } catch (err) {
    const detail = `${err.stdout ?? ''}${err.stderr ?? ''}`
      .split('\n')
      .filter((l) => l && !l.startsWith('npm warn'))
      .slice(-8)
      .join('\n');
    console.error(`package: ${err.message}${detail ? `\n${detail}` : ''}`);
    process.exit(1);
  }
}
