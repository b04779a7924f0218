// What "Quarry: Train a Model…" offers and says, without the editor: the base models (the recipe's, the bundled tiny
// model, the models registered with `quarry checkpoints load`), the last answers put first (the editor keeps them in
// workspaceState), the steps a CPU run starts from (tiny by design: a few steps that finish in minutes), a job's name
// by what differs between runs (base model, data, engine stage, time) and the review step's full command line.
import { basename, dirname } from 'node:path';
import { shellQuote } from '../../core/training/overrides';

/** One offered answer: what the quick pick shows and the value it gives. */
export interface Offered<T> {
  label: string;
  description: string;
  detail?: string;
  value: T;
}

/** The wizard's answers remembered from its last run in this workspace (what workspaceState holds). */
export interface WizardMemory {
  recipe?: string;
  model?: string;
  data?: string;
  engine?: string;
  target?: string;
  gpus?: number;
  maxSteps?: number | null;
}

/** Reads a remembered value back, keeping only fields of the right type (workspaceState is the user's disk). */
export function readWizardMemory(raw: unknown): WizardMemory {
  if (!raw || typeof raw !== 'object') return {};
  const r = raw as Record<string, unknown>;
  const out: WizardMemory = {};
  for (const k of ['recipe', 'model', 'data', 'engine', 'target'] as const) if (typeof r[k] === 'string') out[k] = r[k];
  if (typeof r.gpus === 'number' && Number.isInteger(r.gpus) && r.gpus >= 0) out.gpus = r.gpus;
  if (r.maxSteps === null || (typeof r.maxSteps === 'number' && Number.isInteger(r.maxSteps) && r.maxSteps > 0))
    out.maxSteps = r.maxSteps;
  return out;
}

/** The items with the one whose value is `last` moved first and said to be the last used; the rest keep their order. */
export function lastFirst<T>(items: Offered<T>[], last: T | undefined): Offered<T>[] {
  const i = last === undefined ? -1 : items.findIndex((it) => it.value === last);
  if (i < 0) return items;
  const chosen = items[i];
  const said = chosen.description ? `last used · ${chosen.description}` : 'last used';
  return [{ ...chosen, description: said }, ...items.slice(0, i), ...items.slice(i + 1)];
}

/** A registered model the wizard can train from: its name and the Hugging Face folder it was loaded from. */
export interface RegisteredBase {
  name: string;
  checkpoint: string;
}

/**
 * The base models offered: the bundled tiny model first (it trains on a CPU in minutes), then the recipe's base model
 * (the paper's, for a GPU machine), then each registered model's checkpoint folder (once per folder), the last one
 * used first of all.
 */
export function baseModelChoices(o: {
  bundled: string | null;
  recipeModel: string | null;
  registered: readonly RegisteredBase[];
  last?: string;
}): Offered<string>[] {
  const out: Offered<string>[] = [];
  const seen = new Set<string>();
  const add = (it: Offered<string>) => {
    if (seen.has(it.value)) return;
    seen.add(it.value);
    out.push(it);
  };
  if (o.bundled)
    add({
      label: 'tiny-sql (bundled)',
      description: 'a 1.7M-parameter model that trains on the CPU in minutes',
      detail: o.bundled,
      value: o.bundled,
    });
  if (o.recipeModel) add({ label: o.recipeModel, description: "the recipe's base model", value: o.recipeModel });
  for (const m of o.registered)
    add({
      label: m.name,
      description: 'registered (quarry checkpoints load)',
      detail: m.checkpoint,
      value: m.checkpoint,
    });
  return lastFirst(out, o.last);
}

/** The steps a TRL run is offered: the last answer, else on the CPU a few (a try that ends in minutes), else none. */
const CPU_DEFAULT_STEPS = 8;
export function defaultSteps(gpus: number, last: number | null | undefined): number | null {
  if (last !== undefined) return last;
  return gpus === 0 ? CPU_DEFAULT_STEPS : null;
}

/** A short name for a model or data path: the folder's name (a generic file name is named by its folder). */
export function shortName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const base = basename(trimmed);
  if (/^(sft|train|data|test|dev)\.(jsonl|parquet|json)$/.test(base)) return basename(dirname(trimmed)) || base;
  return base.replace(/\.(jsonl|parquet|json)$/, '') || trimmed;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A job's name by what differs between runs: `tiny-sql · sft-clinic · trl SFT · 11-29 00:41:07` (base model,
 * data, engine and stage, local time to the second: jobs started together on several targets differ). The target
 * is not in it: the Jobs view and the panel show it beside the name.
 */
export function jobDisplayName(p: { model: string; data: string; engine: string; stage: string; now: Date }): string {
  const t = p.now;
  const day = `${pad(t.getMonth() + 1)}-${pad(t.getDate())}`;
  const when = `${day} ${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  return `${shortName(p.model)} · ${shortName(p.data)} · ${p.engine} ${p.stage} · ${when}`;
}

/** A command line as a shell would read it back (core/training/overrides.ts's quoting), for the review step. */
export function commandLine(argv: readonly string[]): string {
  return argv.map((a) => shellQuote(a)).join(' ');
}
