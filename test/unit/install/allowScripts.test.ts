// npm 11 runs a dependency's install script only when package.json's allowScripts approves it, and ends `npm ci` with a
// list of the ones it skipped without a decision. Every installed package with an install script must have an entry,
// so a newcomer's `npm ci` prints nothing to wonder about; the decisions Quarry relies on are checked by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..', '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };

/** Installed packages (node_modules and @scope/ folders, not nested ones) whose install npm would run a script for. */
function withInstallScripts(): string[] {
  const nm = join(root, 'node_modules');
  const dirs = readdirSync(nm).flatMap((d) =>
    d.startsWith('@') ? readdirSync(join(nm, d)).map((s) => `${d}/${s}`) : d.startsWith('.') ? [] : [d],
  );
  const out: string[] = [];
  for (const name of dirs) {
    const file = join(nm, name, 'package.json');
    if (!existsSync(file)) continue;
    const p = JSON.parse(readFileSync(file, 'utf8')) as { scripts?: Record<string, string>; gypfile?: boolean };
    const s = p.scripts ?? {};
    const gyp = p.gypfile !== false && existsSync(join(nm, name, 'binding.gyp'));
    if (s.preinstall || s.install || s.postinstall || gyp) out.push(name);
  }
  return out.sort();
}

test('every installed package with an install script has an allowScripts decision in package.json', () => {
  const decided = new Set(Object.keys(pkg.allowScripts ?? {}).map((k) => k.replace(/(.)@.*$/, '$1')));
  const undecided = withInstallScripts().filter((n) => !decided.has(n));
  assert.deepEqual(undecided, [], `add these to allowScripts (npm install-scripts approve|deny): ${undecided}`);
});

test("the decisions Quarry needs: esbuild and vsce-sign run; better-sqlite3's and onnxruntime-node's do not", () => {
  assert.deepEqual(pkg.allowScripts, {
    'better-sqlite3': false,
    'onnxruntime-node': false,
    esbuild: true,
    '@vscode/vsce-sign': true,
  });
});
