// The model registry, `.quarry/models.json` in the workspace: every checkpoint loaded into the editor, with where it
// came from (job, step, recipe, data hashes, base model), the spec the model backends take (`onnx:<dir>` or
// `openai:<baseURL>#<model>`), its parity result, the server it runs in when it is served, and the evaluations run on
// it. Versioned (`quarry.models/1`), checked on every read (a bad file is named, never half-used), written whole: a
// temporary file beside it, flushed, then renamed over it, so a killed writer leaves the old registry or the new one.
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

export const MODELS_SCHEMA = 'quarry.models/1';
export const MODELS_FILE = '.quarry/models.json';

export interface DataHash {
  path: string;
  sha256: string;
}

export interface Provenance {
  /** The checkpoint folder as given (the trainer's form: a Hugging Face folder). */
  checkpoint: string;
  jobId: string | null;
  step: number | null;
  engine: string | null;
  recipe: string | null;
  /** The model training started from (run.json's config, else the checkpoint's config.json `_name_or_path`). */
  baseModel: string | null;
  /** run.json's data files and their sha256. */
  data: DataHash[];
  /** The run.json read, or null when none was found. */
  runJson: string | null;
}

export interface ParityResult {
  equal: boolean;
  cases: number;
  differing: number;
  /** The first case that differs and the first token position where it does; null when all are equal. */
  firstDivergence: { case: number; position: number; expected: number | null; got: number | null } | null;
  /** What the trainer's greedy tokens were compared with: the ONNX export (onnxruntime) or the served model. */
  against: 'onnx' | 'served';
  checkedAt: string;
}

export interface ServerInfo {
  kind: 'transformers' | 'vllm' | 'sglang';
  /** The host it runs on: `local`, or an SSH host reached through a tunnel. */
  host: string;
  pid: number;
  port: number;
  command: string[];
  log: string;
  tunnel: { pid: number; localPort: number } | null;
  /** The ssh options the server was reached with (a remote host), so unloading reaches the same host. */
  sshOptions?: string[];
}

export interface Evaluation {
  /** The bench report (report.json) and its folder's trajectories. */
  report: string;
  dataset: string;
  protocol: string;
  samples: number;
  items: number;
  ex: { greedy: number; majority: number | null; passAtK: number | null };
  at: string;
}

export interface RegisteredModel {
  name: string;
  spec: string;
  form: 'onnx' | 'served';
  loadedAt: string;
  provenance: Provenance;
  parity: ParityResult | null;
  server: ServerInfo | null;
  evaluations: Evaluation[];
}

export interface ModelRegistryDoc {
  schema: typeof MODELS_SCHEMA;
  models: RegisteredModel[];
}

export class ModelRegistryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelRegistryError';
  }
}

const NAME_RE = /^[A-Za-z0-9][\w.-]{0,79}$/;

/** Why a registry name is not one, or null. Names become folder names (.quarry/models/<name>). */
export function modelNameProblem(name: string): string | null {
  return NAME_RE.test(name)
    ? null
    : `model names are 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit`;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

const strOrNull = (v: unknown) => v === null || typeof v === 'string';
const numOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v));

function provenanceProblem(p: unknown): string | null {
  if (!isObj(p)) return 'provenance must be an object';
  if (typeof p.checkpoint !== 'string') return 'provenance.checkpoint must be a string';
  for (const k of ['jobId', 'engine', 'recipe', 'baseModel', 'runJson'] as const)
    if (!strOrNull(p[k])) return `provenance.${k} must be a string or null`;
  if (!numOrNull(p.step)) return 'provenance.step must be a number or null';
  if (
    !Array.isArray(p.data) ||
    p.data.some((d) => !isObj(d) || typeof d.path !== 'string' || typeof d.sha256 !== 'string')
  )
    return 'provenance.data must be a list of {path, sha256}';
  return null;
}

function parityProblem(p: unknown): string | null {
  if (p === null) return null;
  if (!isObj(p)) return 'parity must be an object or null';
  if (typeof p.equal !== 'boolean') return 'parity.equal must be true or false';
  if (typeof p.cases !== 'number' || typeof p.differing !== 'number') return 'parity.cases/differing must be numbers';
  if (p.against !== 'onnx' && p.against !== 'served') return 'parity.against must be "onnx" or "served"';
  if (p.firstDivergence !== null && !(isObj(p.firstDivergence) && typeof p.firstDivergence.position === 'number'))
    return 'parity.firstDivergence must be {case, position, expected, got} or null';
  return null;
}

function serverProblem(s: unknown): string | null {
  if (s === null) return null;
  if (!isObj(s)) return 'server must be an object or null';
  if (!['transformers', 'vllm', 'sglang'].includes(s.kind as string)) return 'server.kind is not a known server';
  if (typeof s.host !== 'string') return 'server.host must be a string';
  if (typeof s.pid !== 'number' || typeof s.port !== 'number') return 'server.pid and server.port must be numbers';
  if (!Array.isArray(s.command) || s.command.some((c) => typeof c !== 'string')) return 'server.command: strings';
  if (s.tunnel !== null && !(isObj(s.tunnel) && typeof s.tunnel.pid === 'number'))
    return 'server.tunnel must be {pid, localPort} or null';
  if (s.sshOptions !== undefined && !(Array.isArray(s.sshOptions) && s.sshOptions.every((o) => typeof o === 'string')))
    return 'server.sshOptions must be a list of strings';
  return null;
}

function evaluationProblem(e: unknown): string | null {
  if (!isObj(e)) return 'an evaluation must be an object';
  for (const k of ['report', 'dataset', 'protocol', 'at'] as const)
    if (typeof e[k] !== 'string') return `evaluation.${k} must be a string`;
  if (typeof e.samples !== 'number' || typeof e.items !== 'number') return 'evaluation.samples/items must be numbers';
  if (!isObj(e.ex) || typeof e.ex.greedy !== 'number' || !numOrNull(e.ex.majority) || !numOrNull(e.ex.passAtK))
    return 'evaluation.ex must be {greedy, majority, passAtK}';
  return null;
}

/** What is wrong with one registered model, or null. */
export function registeredModelProblem(m: unknown): string | null {
  if (!isObj(m)) return 'a model entry must be an object';
  if (typeof m.name !== 'string' || modelNameProblem(m.name)) return `bad name ${JSON.stringify(m.name)}`;
  if (typeof m.spec !== 'string' || !/^(onnx|openai):/.test(m.spec)) return 'spec must be onnx:<dir> or openai:…#…';
  if (m.form !== 'onnx' && m.form !== 'served') return 'form must be "onnx" or "served"';
  if (typeof m.loadedAt !== 'string') return 'loadedAt must be a string';
  const problem =
    provenanceProblem(m.provenance) ??
    parityProblem(m.parity) ??
    serverProblem(m.server) ??
    (Array.isArray(m.evaluations) ? m.evaluations.map(evaluationProblem).find((p) => p) : 'evaluations must be a list');
  return problem ?? null;
}

/** What is wrong with a registry document, or null. */
export function registryProblem(doc: unknown): string | null {
  if (!isObj(doc)) return 'the registry is a JSON object';
  if (doc.schema !== MODELS_SCHEMA) return `schema must be "${MODELS_SCHEMA}", got ${JSON.stringify(doc.schema)}`;
  if (!Array.isArray(doc.models)) return '"models" must be a list';
  const seen = new Set<string>();
  for (const [i, m] of doc.models.entries()) {
    const p = registeredModelProblem(m);
    if (p) return `models[${i}]: ${p}`;
    const name = (m as RegisteredModel).name;
    if (seen.has(name)) return `models[${i}]: the name ${name} is used twice`;
    seen.add(name);
  }
  return null;
}

/** Writes text whole: a flushed temporary file renamed over the target. */
export function writeWholeSync(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** The registry of one workspace. Each change reads the file anew, so the CLI and the editor can both write it. */
export class ModelRegistry {
  readonly file: string;

  constructor(workspace: string) {
    this.file = join(workspace, MODELS_FILE);
  }

  /** Every model; an absent file is an empty registry, a bad one an error naming the file and the problem. */
  read(): ModelRegistryDoc {
    if (!existsSync(this.file)) return { schema: MODELS_SCHEMA, models: [] };
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (err) {
      throw new ModelRegistryError(`${this.file} is not JSON: ${(err as Error).message}`);
    }
    const problem = registryProblem(doc);
    if (problem) throw new ModelRegistryError(`${this.file} is not a ${MODELS_SCHEMA} registry: ${problem}`);
    return doc as ModelRegistryDoc;
  }

  list(): RegisteredModel[] {
    return this.read().models;
  }

  get(name: string): RegisteredModel | undefined {
    return this.list().find((m) => m.name === name);
  }

  /** The entry of `name`, or an error listing the names there are. */
  require(name: string): RegisteredModel {
    const m = this.get(name);
    if (m) return m;
    const names = this.list().map((x) => x.name);
    throw new ModelRegistryError(
      `no model ${JSON.stringify(name)} in ${this.file}` + (names.length ? ` (there are: ${names.join(', ')})` : ''),
    );
  }

  private write(doc: ModelRegistryDoc): void {
    const problem = registryProblem(doc);
    if (problem) throw new ModelRegistryError(`refusing to write a bad registry: ${problem}`);
    writeWholeSync(this.file, JSON.stringify(doc, null, 1) + '\n');
  }

  /** Adds or replaces the model of that name. */
  put(model: RegisteredModel): void {
    const doc = this.read();
    const at = doc.models.findIndex((m) => m.name === model.name);
    if (at >= 0) doc.models[at] = model;
    else doc.models.push(model);
    this.write(doc);
  }

  /** Removes a model; returns the entry removed (undefined when there was none). */
  remove(name: string): RegisteredModel | undefined {
    const doc = this.read();
    const at = doc.models.findIndex((m) => m.name === name);
    if (at < 0) return undefined;
    const [gone] = doc.models.splice(at, 1);
    this.write(doc);
    return gone;
  }

  /** Records an evaluation with the model (a rerun of the same report path replaces the old entry). */
  addEvaluation(name: string, evaluation: Evaluation): RegisteredModel {
    const doc = this.read();
    const m = doc.models.find((x) => x.name === name);
    if (!m) throw new ModelRegistryError(`no model ${JSON.stringify(name)} in ${this.file}`);
    m.evaluations = [...m.evaluations.filter((e) => e.report !== evaluation.report), evaluation];
    this.write(doc);
    return m;
  }
}

/** A one-line description of a model's origin, for pickers and lists. */
export function describeProvenance(m: RegisteredModel): string {
  const p = m.provenance;
  const parts = [
    p.jobId ? `job ${p.jobId}` : null,
    p.step !== null ? `step ${p.step}` : null,
    p.engine,
    p.recipe ? `recipe ${p.recipe}` : null,
    p.baseModel ? `from ${p.baseModel.split('/').filter(Boolean).pop()}` : null,
  ].filter(Boolean);
  const parity = m.parity
    ? m.parity.equal
      ? 'parity ok'
      : `parity differs at token ${m.parity.firstDivergence?.position}`
    : null;
  return [...parts, parity].filter(Boolean).join(' · ');
}
