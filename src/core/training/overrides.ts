// Engine overrides as Hydra command-line arguments (`key=value`, `+key=value` for a key the config lacks): their
// values rendered in Hydra's override grammar, and each argument quoted for a POSIX shell. A value may refer to a
// variable the launch script sets (`${QUARRY_TRAINER_DIR}`): such arguments keep that reference for the shell.
import type { EngineValue } from './recipe';

export interface Override {
  /** The engine's dotted key. */
  key: string;
  value: EngineValue;
  /** Added with `+`: the engine's config does not declare the key. */
  add?: boolean;
  /** What it comes from: a recipe setting (`rl.lr`), `engines.verl.<key>`, `--set`, or `quarry` (Quarry's plumbing). */
  from: string;
  /** The value holds `${NAME}` references to variables the launch script defines. */
  shellVars?: boolean;
  /** A real number: a whole value is written `1.0`, as the paper writes it and a float field expects. */
  float?: boolean;
}

const BARE = /^[A-Za-z_/][\w./-]*$/;
const LOOKS_TYPED = /^(true|false|null|nan|inf|[+-]?\d[\d_]*(\.\d*)?([eE][+-]?\d+)?)$/i;

/** A number as Hydra reads it back as the same number (1e-6, not 0.000001). */
export function numberText(n: number): string {
  if (Number.isInteger(n)) return String(n);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e7)) return n.toExponential().replace('e+', 'e');
  return String(n);
}

/** `value` in Hydra's override grammar: strings quoted when they would read as another type or hold syntax. */
export function hydraValue(value: EngineValue, shellVars = false, float = false): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    return float && Number.isInteger(value) && Math.abs(value) < 1e7 ? value.toFixed(1) : numberText(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => hydraValue(v, shellVars, float)).join(',')}]`;
  const plain = shellVars ? value.replace(/\$\{[A-Z_][A-Z0-9_]*\}/g, 'x') : value;
  if (BARE.test(plain) && !LOOKS_TYPED.test(plain)) return value;
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The override as one Hydra argument. */
export function overrideArg(o: Override): string {
  return `${o.add ? '+' : ''}${o.key}=${hydraValue(o.value, o.shellVars, o.float)}`;
}

/** One argument quoted for a POSIX shell: single quotes, or double quotes where `${NAME}` must expand. */
export function shellQuote(arg: string, shellVars = false): string {
  if (!shellVars) {
    if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
    // Hydra's own quotes are single: double quotes read better when nothing inside them expands.
    if (arg.includes("'") && !/["$`\\]/.test(arg)) return `"${arg}"`;
    return `'${arg.replace(/'/g, `'"'"'`)}'`;
  }
  const parts = arg.split(/(\$\{[A-Z_][A-Z0-9_]*\})/);
  return parts
    .map((p) => (/^\$\{[A-Z_][A-Z0-9_]*\}$/.test(p) ? `"${p}"` : p === '' ? '' : `'${p.replace(/'/g, `'"'"'`)}'`))
    .join('');
}

/** A reference to a variable the launch script defines, to put in an override's value (`shellVars: true`). */
export function shellVar(name: string): string {
  return '$' + `{${name}}`;
}

/** The last override of `key` (later ones win, as on Hydra's command line). */
export function overrideValue(overrides: readonly Override[], key: string): EngineValue | undefined {
  for (let i = overrides.length - 1; i >= 0; i--) if (overrides[i].key === key) return overrides[i].value;
  return undefined;
}

/** `overrides` with every earlier override of the same key dropped, order kept. */
export function dedupeOverrides(overrides: readonly Override[]): Override[] {
  const last = new Map<string, number>();
  overrides.forEach((o, i) => last.set(o.key, i));
  return overrides.filter((o, i) => last.get(o.key) === i);
}
