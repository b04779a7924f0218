// The checkpoint compare panel's message protocol, shared by the host (src/extension/compare/panel.ts) and
// the webview app (webview/compare/main.ts). The host sends the comparison of two or more registered models on one
// dataset (EX greedy / majority / pass@K by hardness, the questions whose greedy answers disagree); the app draws it
// and asks the host to open one disagreement's two trajectories in Replay's compare view. Every message from the app
// is checked (COMPARE_RULES, compareMessageProblem) before the host acts. No `vscode`, Node or DOM.
import type { CheckpointComparison } from '../core/training/checkpointCompare';
import { asObject, fieldProblem, type MessageRules } from './validate';

interface ComparedModel {
  name: string;
  spec: string;
  /** describeProvenance: job, step, engine, recipe, base model, parity. */
  provenance: string;
  /** The bench report the numbers come from. */
  report: string;
}

export interface CompareView {
  dataset: string;
  models: ComparedModel[];
  comparison: CheckpointComparison;
}

/** Host → app. */
export type ToApp = { type: 'comparison'; view: CompareView } | { type: 'error'; text: string };

/** App → host. */
export type ToHost =
  | { type: 'ready' }
  /** Opens disagreement `key`'s greedy trajectories of models `a` and `b` side by side in Replay. */
  | { type: 'openPair'; key: string; a: string; b: string };

export const COMPARE_RULES: MessageRules<ToHost> = {
  ready: {},
  openPair: { key: 'string', a: 'string', b: 'string' },
};

/** What the field types cannot say: the key must be a listed disagreement, a and b two different compared models. */
export function compareMessageProblem(msg: ToHost, view: CompareView | null): string | null {
  if (msg.type !== 'openPair') return null;
  if (!view) return 'openPair: nothing is compared yet';
  if (!view.comparison.disagreements.some((d) => d.key === msg.key))
    return `openPair: ${JSON.stringify(msg.key.slice(0, 80))} is not one of the disagreements`;
  for (const m of [msg.a, msg.b])
    if (!view.comparison.models.includes(m))
      return `openPair: ${JSON.stringify(m.slice(0, 80))} is not one of the compared models`;
  if (msg.a === msg.b) return 'openPair: a and b must be two different models';
  return null;
}

/** The app's saved state (written when a comparison is shown): which models, on which dataset. */
export interface CompareState {
  names: string[];
  dataset: string;
}

const MAX_COMPARED = 50;
const MAX_NAME_CHARS = 200;
const MAX_DATASET_CHARS = 4096;

/** The saved state the host reopens the panel with after a window reload, checked like a message. */
export function compareRestore(raw: unknown): { ok: true; value: CompareState } | { ok: false; error: string } {
  const o = asObject(raw);
  if (!o) return { ok: false, error: 'the compare panel state is not an object' };
  const problem = fieldProblem(o, { names: 'array', dataset: 'string' }, 'compare panel state');
  if (problem) return { ok: false, error: problem };
  const names = o.names as unknown[];
  const dataset = o.dataset as string;
  if (names.length < 2 || names.length > MAX_COMPARED)
    return { ok: false, error: `compare panel state: ${names.length} models (2 to ${MAX_COMPARED} are compared)` };
  for (const n of names) {
    if (typeof n !== 'string' || n === '' || n.length > MAX_NAME_CHARS)
      return { ok: false, error: `compare panel state: ${JSON.stringify(n).slice(0, 80)} is no model name` };
  }
  if (new Set(names).size !== names.length) return { ok: false, error: 'compare panel state: a model is named twice' };
  if (dataset === '' || dataset.length > MAX_DATASET_CHARS || dataset.includes('\0'))
    return { ok: false, error: 'compare panel state: the dataset is empty, too long or has a NUL' };
  return { ok: true, value: { names: names as string[], dataset } };
}
