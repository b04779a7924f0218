// `--panel NAME|FILE.json`: a built-in panel by name, or a user's panel file (PanelSpec as JSON).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { registerBuiltins } from './builtins';
import { listPanels, panelSpec, resolvePanel } from './registry';
import type { PanelSpec, ResolvedPanel } from './types';

/** The built-in panel of that name, or null. */
export function builtinPanel(name: string): ResolvedPanel | null {
  registerBuiltins();
  const spec = panelSpec(name);
  return spec ? resolvePanel(spec) : null;
}

/** Whether `name` can only be a built-in panel's (no .json ending, no folder): an unknown one is an error. */
export function isPanelName(name: string): boolean {
  return !/\.json$/i.test(name) && !name.includes('/');
}

export function unknownPanelMessage(name: string): string {
  registerBuiltins();
  return `unknown panel '${name}' (built-in: ${listPanels().join(', ')}; or give a panel .json file)`;
}

/**
 * A panel from a panel file's text; `label` names the file in messages. With `quote` false a JSON syntax error is
 * reported without the parser's message, which quotes the file's text (the environment service answers clients).
 */
export function panelFromText(text: string, label: string, quote = true): ResolvedPanel {
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (err) {
    throw new Error(`panel file ${label} is not valid JSON${quote ? `: ${(err as Error).message}` : ''}`);
  }
  if (!spec || typeof spec !== 'object' || Array.isArray(spec))
    throw new Error(`panel file ${label} must hold one JSON object`);
  try {
    return resolvePanel(spec as PanelSpec);
  } catch (err) {
    throw new Error(`panel file ${label}: ${(err as Error).message}`);
  }
}

export function loadPanel(nameOrPath: string, cwd = process.cwd()): ResolvedPanel {
  const builtin = builtinPanel(nameOrPath);
  if (builtin) return builtin;
  if (isPanelName(nameOrPath)) throw new Error(unknownPanelMessage(nameOrPath));
  const path = resolve(cwd, nameOrPath);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(`cannot read panel file ${path}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  return panelFromText(text, path);
}
