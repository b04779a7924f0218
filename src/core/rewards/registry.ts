// Term functions and built-in panels, by id and by name. Built-ins register themselves in builtins.ts; user panels
// are plain PanelSpec objects (usually read from a JSON file by panelFile.ts) resolved against this registry.
//
// The progress panel (Progress-SQL) lives in ./progress: that module exports PROGRESS_TERMS (TermDefinition[]) and
// PROGRESS_PANEL (PanelSpec, name `progress`); builtins.ts registers them like the other four.
import type { PanelSpec, ResolvedPanel, TermDefinition } from './types';
import type { PanelSuiteUse } from './testSuite';
import { EVAL_MODES } from '../eval/modes';

const terms = new Map<string, TermDefinition>();
const panels = new Map<string, PanelSpec>();

export function registerTerm(def: TermDefinition): void {
  if (terms.has(def.id) && terms.get(def.id) !== def) throw new Error(`reward term '${def.id}' is registered twice`);
  terms.set(def.id, def);
}

export function registerPanel(spec: PanelSpec): void {
  if (panels.has(spec.name) && panels.get(spec.name) !== spec)
    throw new Error(`reward panel '${spec.name}' is registered twice`);
  panels.set(spec.name, spec);
}

function listTerms(): TermDefinition[] {
  return [...terms.values()].sort((a, b) => a.id.localeCompare(b.id));
}

export function panelSpec(name: string): PanelSpec | undefined {
  return panels.get(name);
}

export function listPanels(): string[] {
  return [...panels.keys()].sort();
}

/** Applies `extends`, weight and param overrides; checks names, weights and term ids. Throws with a clear message. */
export function resolvePanel(spec: PanelSpec, seen: string[] = []): ResolvedPanel {
  const where = `panel '${spec.name}'`;
  if (typeof spec.name !== 'string' || spec.name.trim() === '') throw new Error('a panel needs a non-empty "name"');
  if (seen.includes(spec.name))
    throw new Error(`${where}: 'extends' forms a cycle (${[...seen, spec.name].join(' → ')})`);
  let base: ResolvedPanel | null = null;
  if (spec.extends !== undefined) {
    const parent = panels.get(spec.extends);
    if (!parent)
      throw new Error(`${where} extends unknown panel '${spec.extends}' (known: ${listPanels().join(', ')})`);
    base = resolvePanel(parent, [...seen, spec.name]);
  }
  if (!spec.terms && !base) throw new Error(`${where} has no "terms" and extends no panel`);
  const list = spec.terms
    ? spec.terms.map((t, i) => {
        if (!t || typeof t !== 'object') throw new Error(`${where}: terms[${i}] is not an object`);
        if (typeof t.name !== 'string' || t.name === '') throw new Error(`${where}: terms[${i}] needs a "name"`);
        if (typeof t.term !== 'string')
          throw new Error(
            `${where}: term '${t.name}' needs a "term" id (known: ${listTerms()
              .map((d) => d.id)
              .join(', ')})`,
          );
        const definition = terms.get(t.term);
        if (!definition)
          throw new Error(
            `${where}: term '${t.name}' refers to unknown term id '${t.term}' (known: ${listTerms()
              .map((d) => d.id)
              .join(', ')})`,
          );
        return { ...t, params: { ...(t.params ?? {}) }, definition };
      })
    : base!.terms.map((t) => ({ ...t, params: { ...(t.params ?? {}) } }));

  const names = new Set<string>();
  for (const t of list) {
    if (names.has(t.name)) throw new Error(`${where}: term name '${t.name}' appears twice`);
    for (const g of t.gate ?? []) {
      if (!names.has(g)) throw new Error(`${where}: term '${t.name}' is gated by '${g}', which is not an earlier term`);
    }
    names.add(t.name);
  }
  for (const [name, w] of Object.entries(spec.weights ?? {})) {
    const t = list.find((x) => x.name === name);
    if (!t) throw new Error(`${where}: "weights" names unknown term '${name}' (terms: ${[...names].join(', ')})`);
    t.weight = w;
  }
  for (const [name, p] of Object.entries(spec.params ?? {})) {
    const t = list.find((x) => x.name === name);
    if (!t) throw new Error(`${where}: "params" names unknown term '${name}' (terms: ${[...names].join(', ')})`);
    if (!p || typeof p !== 'object') throw new Error(`${where}: params for '${name}' must be an object`);
    t.params = { ...t.params, ...p };
  }
  for (const t of list) {
    if (typeof t.weight !== 'number' || !Number.isFinite(t.weight))
      throw new Error(`${where}: term '${t.name}' needs a finite numeric "weight"`);
  }
  if (spec.mode !== undefined && !EVAL_MODES.includes(spec.mode)) {
    throw new Error(`${where}: "mode" must be one of ${EVAL_MODES.join(', ')} (got ${JSON.stringify(spec.mode)})`);
  }
  const testSuite = panelSuiteUse(spec, where) ?? base?.testSuite;
  return {
    name: spec.name,
    description: spec.description ?? base?.description ?? '',
    source: spec.source ?? base?.source ?? '',
    mode: spec.mode ?? base?.mode ?? 'spider',
    ...(testSuite ? { testSuite } : {}),
    terms: list,
  };
}

/**
 * `"exec": {"testSuite": true|false}`: whether the execution terms require a test suite or never use one. A panel
 * file may only switch it: the suite's folder comes from the command line, so a path here is refused.
 */
function panelSuiteUse(spec: PanelSpec, where: string): PanelSuiteUse | undefined {
  const exec: unknown = spec.exec;
  if (exec === undefined) return undefined;
  if (!exec || typeof exec !== 'object' || Array.isArray(exec))
    throw new Error(`${where}: "exec" must be an object such as {"testSuite": true}`);
  for (const key of Object.keys(exec))
    if (key !== 'testSuite') throw new Error(`${where}: "exec" has unknown key '${key}' (known: testSuite)`);
  const v = (exec as { testSuite?: unknown }).testSuite;
  if (v === undefined) return undefined;
  if (typeof v === 'string')
    throw new Error(
      `${where}: "exec.testSuite" must be true or false; a panel cannot name a test-suite folder ` +
        '(it is given on the command line: --test-suite TSDIR)',
    );
  if (typeof v !== 'boolean') throw new Error(`${where}: "exec.testSuite" must be true or false`);
  return v ? 'require' : 'off';
}
