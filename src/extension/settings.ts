// The `quarry.*` settings as one typed snapshot. Pure (no `vscode` import) so the coercion rules are unit-tested:
// settings.json is hand-edited, so every value is checked and a wrong type or an out-of-range number falls back to
// the manifest's default (or is clamped) instead of reaching the agent.
import type { ProtocolName } from '../core/agent/types';
import { ASK_PROTOCOL_NAMES } from '../core/agent/protocols';
import { DEFAULT_TRAJECTORY_STORE } from '../app/trajectoryStore';

export type ModelBackend = 'vscode-lm' | 'openai' | 'onnx';
export const MODEL_BACKENDS: readonly ModelBackend[] = ['vscode-lm', 'openai', 'onnx'];
/**
 * The protocols the setting offers (package.json's enum); `progress` is a training-time protocol, not an editor one.
 */
export const EDITOR_PROTOCOLS: readonly ProtocolName[] = ASK_PROTOCOL_NAMES;

export interface QuarrySettings {
  model: {
    backend: ModelBackend;
    /** Base URL of the OpenAI-compatible server, without a trailing slash. */
    baseUrl: string;
    /** Server model name, or the vscode-lm family/id; '' means "the first available". */
    name: string;
    /** '' means the bundled tiny demo model. */
    onnxPath: string;
  };
  agent: {
    protocol: ProtocolName;
    maxTurns: number;
    temperature: number;
    modelTimeoutMs: number;
    maxResponseChars: number;
  };
  observation: { maxRows: number; maxChars: number };
  query: { timeoutMs: number };
  databases: { glob: string };
  /**
   * `store` is relative to the first workspace folder unless absolute; `save` appends every asked question's episode.
   */
  trajectories: { store: string; save: boolean };
  /** The Python interpreter for training ('' = the Python extension's selection, else a workspace .venv/). */
  python: string;
  /**
   * Training targets by name, over .quarry/targets.json: kept as the JSON object it is here (an array or a scalar reads
   * as {}); training/jobStore.ts checks it with parseTargets and says what is wrong.
   */
  targets: Record<string, unknown>;
}

/** The manifest's defaults (package.json contributes.configuration); a unit test keeps the two in step. */
export const DEFAULT_SETTINGS: QuarrySettings = {
  model: { backend: 'vscode-lm', baseUrl: 'http://127.0.0.1:8000/v1', name: '', onnxPath: '' },
  agent: { protocol: 'skyrl', maxTurns: 5, temperature: 0, modelTimeoutMs: 120_000, maxResponseChars: 1_000_000 },
  observation: { maxRows: 50, maxChars: 9000 },
  query: { timeoutMs: 5000 },
  databases: { glob: '**/*.{sqlite,sqlite3,db}' },
  trajectories: { store: DEFAULT_TRAJECTORY_STORE, save: true },
  python: '',
  targets: {},
};

/** Reads one setting by its key under `quarry.` (e.g. 'model.backend'); undefined when unset. */
type SettingGetter = (key: string) => unknown;

function str(v: unknown, fallback: string, allowEmpty = true): string {
  if (typeof v !== 'string') return fallback;
  const t = v.trim();
  return t === '' && !allowEmpty ? fallback : t;
}

function num(v: unknown, fallback: number, min: number, max: number, integer = false): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return fallback;
  const n = integer ? Math.round(v) : v;
  return Math.min(max, Math.max(min, n));
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return typeof v === 'string' && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

function objectOr(v: unknown, fallback: Record<string, unknown>): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fallback;
}

export function readSettings(get: SettingGetter): QuarrySettings {
  const d = DEFAULT_SETTINGS;
  return {
    model: {
      backend: oneOf(get('model.backend'), MODEL_BACKENDS, d.model.backend),
      baseUrl: str(get('model.baseUrl'), d.model.baseUrl, false).replace(/\/+$/, ''),
      name: str(get('model.name'), d.model.name),
      onnxPath: str(get('model.onnxPath'), d.model.onnxPath),
    },
    agent: {
      protocol: oneOf(get('agent.protocol'), EDITOR_PROTOCOLS, d.agent.protocol),
      maxTurns: num(get('agent.maxTurns'), d.agent.maxTurns, 1, 30, true),
      temperature: num(get('agent.temperature'), d.agent.temperature, 0, 2),
      modelTimeoutMs: num(get('agent.modelTimeoutMs'), d.agent.modelTimeoutMs, 1000, 3_600_000, true),
      maxResponseChars: num(get('agent.maxResponseChars'), d.agent.maxResponseChars, 1000, 100_000_000, true),
    },
    observation: {
      maxRows: num(get('observation.maxRows'), d.observation.maxRows, 1, 10_000, true),
      maxChars: num(get('observation.maxChars'), d.observation.maxChars, 200, 1_000_000, true),
    },
    query: { timeoutMs: num(get('query.timeoutMs'), d.query.timeoutMs, 100, 600_000, true) },
    databases: { glob: str(get('databases.glob'), d.databases.glob, false) },
    trajectories: {
      store: str(get('trajectories.store'), d.trajectories.store, false),
      save: typeof get('trajectories.save') === 'boolean' ? (get('trajectories.save') as boolean) : d.trajectories.save,
    },
    python: str(get('python'), d.python),
    targets: objectOr(get('targets'), d.targets),
  };
}

/** Setting keys whose change means a different model (the status bar and cached models follow them). */
export const MODEL_SETTING_KEYS = ['model.backend', 'model.baseUrl', 'model.name', 'model.onnxPath'] as const;
