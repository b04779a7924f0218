// `--panel NAME|FILE.json`: a built-in panel by name, or a user's panel file (PanelSpec as JSON).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { registerBuiltins } from './builtins';
import { listPanels, panelSpec, resolvePanel } from './registry';
import type { PanelSpec, ResolvedPanel } from './types';

export function loadPanel(nameOrPath: string, cwd = process.cwd()): ResolvedPanel {
  registerBuiltins();
  const builtin = panelSpec(nameOrPath);
  if (builtin) return resolvePanel(builtin);
  if (!/\.json$/i.test(nameOrPath) && !nameOrPath.includes('/')) {
    throw new Error(`unknown panel '${nameOrPath}' (built-in: ${listPanels().join(', ')}; or give a panel .json file)`);
  }
  const path = resolve(cwd, nameOrPath);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`cannot read panel file ${path}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (err) {
    throw new Error(`panel file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!spec || typeof spec !== 'object' || Array.isArray(spec))
    throw new Error(`panel file ${path} must hold one JSON object`);
  try {
    return resolvePanel(spec as PanelSpec);
  } catch (err) {
    throw new Error(`panel file ${path}: ${(err as Error).message}`);
  }
}
