// The model registry, `.quarry/models.json` in the workspace: every checkpoint loaded into the editor, with where it
// came from (job, step, recipe, data hashes, base model), the spec the model backends take (`onnx:<dir>` or
// `openai:<baseURL>#<model>`), its parity result, the server it runs in when it is served, and the evaluations run on
// it. Versioned (`quarry.models/1`), checked on every read (a bad file is named, never half-used), written whole: a
// temporary file beside it, flushed, then renamed over it, so a killed writer leaves the old registry or the new one.
// The file is in the workspace, so a cloned repository can carry one: every field Quarry acts on is checked before
// use (process ids, ports, the ssh destination and options, the served URL), so that nothing from it reaches `kill`,
// `ssh` or a shell unchecked; which process may be signalled is decided against /proc (app/checkpoints/serverStop.ts).
import { existsSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { writeJsonAtomicSync } from '../util/atomicWrite';
import { quarryPath } from '../workspace/quarryLayout';
import { readRegularFileSync, FileReadError } from './boundedRead';
import { sshDestinationProblem, sshOptionsProblem } from './sshSafety';

export const MODELS_SCHEMA = 'quarry.models/1';
/** The most of models.json read (a registry of a few hundred models is far less). */
const MAX_REGISTRY_BYTES = 16 << 20;

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

/** Who a process is, as /proc tells it: recorded when Quarry starts it, compared before Quarry signals it. */
export interface ProcessIdentity {
  /** The kernel start time (/proc/<pid>/stat field 22; on a remote host, read there). */
  procStart?: string;
  /** Its command line as /proc showed it (a process on this machine). */
  cmdline?: string[];
}

export interface ServerInfo extends ProcessIdentity {
  kind: 'transformers' | 'vllm' | 'sglang';
  /** The host it runs on: `local`, or an SSH host reached through a tunnel. */
  host: string;
  /** The server's process, the leader of its own process group (here or on the host). */
  pid: number;
  port: number;
  command: string[];
  log: string;
  /** The tunnel's keeper (a remote server), the leader of its own process group here. */
  tunnel: ({ pid: number; localPort: number } & ProcessIdentity) | null;
  /**
   * A random id Quarry put in the environment of the server and of the tunnel's keeper (QUARRY_SERVER_ID): the proof
   * that Quarry started the process it is about to signal.
   */
  id?: string;
  /** The jobs target the host came from (.quarry/targets.json): unloading rebuilds its ssh options from it. */
  target?: string;
  /** The ssh options given with --ssh (allow-listed: core/training/sshSafety.ts), so unloading reaches the host. */
  sshOptions?: string[];
  /** It was loaded with ssh options that are not kept here (not on the allow-list): unloading needs them again. */
  sshOptionsLeftOut?: boolean;
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

interface ModelRegistryDoc {
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

/** The largest pid Linux hands out (PID_MAX_LIMIT, 2^22). */
const PID_MAX = 4_194_304;

/**
 * Why `pid` is not a process id Quarry may have started, or null: an integer from 2 (never 1, init, whose "group"
 * would be kill(-1): every process; nor 0, the caller's own group, nor a negative number, a group of its own).
 */
export function pidProblem(pid: unknown): string | null {
  return Number.isInteger(pid) && (pid as number) >= 2 && (pid as number) <= PID_MAX
    ? null
    : `must be a process id Quarry started: an integer from 2 to ${PID_MAX}, got ${JSON.stringify(pid)}`;
}

const portOk = (p: unknown) => Number.isInteger(p) && (p as number) >= 1 && (p as number) <= 65535;
const PROC_START_RE = /^\d{1,20}$/;
const SERVER_ID_RE = /^[0-9a-f]{32}$/;

function identityProblem(where: string, o: Record<string, unknown>): string | null {
  if (o.procStart !== undefined && !(typeof o.procStart === 'string' && PROC_START_RE.test(o.procStart)))
    return `${where}.procStart must be a kernel start time (digits)`;
  if (
    o.cmdline !== undefined &&
    !(Array.isArray(o.cmdline) && o.cmdline.length > 0 && o.cmdline.every((c) => typeof c === 'string'))
  )
    return `${where}.cmdline must be a non-empty list of strings`;
  return null;
}

function serverProblem(s: unknown): string | null {
  if (s === null) return null;
  if (!isObj(s)) return 'server must be an object or null';
  if (!['transformers', 'vllm', 'sglang'].includes(s.kind as string)) return 'server.kind is not a known server';
  if (typeof s.host !== 'string') return 'server.host must be a string';
  const local = s.host === 'local';
  const hostBad = local ? null : sshDestinationProblem(s.host);
  if (hostBad) return `server.host ${hostBad}`;
  const pidBad = pidProblem(s.pid);
  if (pidBad) return `server.pid ${pidBad}`;
  if (!portOk(s.port)) return `server.port must be a port (an integer from 1 to 65535), got ${JSON.stringify(s.port)}`;
  if (!Array.isArray(s.command) || s.command.some((c) => typeof c !== 'string')) return 'server.command: strings';
  if (typeof s.log !== 'string') return 'server.log must be a string';
  const idBad = identityProblem('server', s);
  if (idBad) return idBad;
  if (s.id !== undefined && !(typeof s.id === 'string' && SERVER_ID_RE.test(s.id)))
    return 'server.id must be 32 hexadecimal digits';
  if (s.tunnel !== null) {
    if (!isObj(s.tunnel)) return 'server.tunnel must be {pid, localPort} or null';
    const tpid = pidProblem(s.tunnel.pid);
    if (tpid) return `server.tunnel.pid ${tpid}`;
    if (!portOk(s.tunnel.localPort)) return 'server.tunnel.localPort must be a port (an integer from 1 to 65535)';
    const tid = identityProblem('server.tunnel', s.tunnel);
    if (tid) return tid;
    if (local) return 'server.tunnel must be null for a server on this machine (host "local")';
  } else if (!local) return 'server.tunnel must be {pid, localPort} for a server on another host';
  if (s.target !== undefined && !(typeof s.target === 'string' && /^[\w.-]{1,80}$/.test(s.target)))
    return 'server.target must be a target name';
  if (s.sshOptions !== undefined) {
    if (!Array.isArray(s.sshOptions)) return 'server.sshOptions must be a list of strings';
    const bad = sshOptionsProblem(s.sshOptions);
    if (bad) return `server.sshOptions: ${bad}`;
  }
  if (s.sshOptionsLeftOut !== undefined && typeof s.sshOptionsLeftOut !== 'boolean')
    return 'server.sshOptionsLeftOut must be true or false';
  if (local && (s.sshOptions !== undefined || s.target !== undefined))
    return 'server.sshOptions and server.target go with a server on another host';
  return null;
}

/** The port of a served spec's loopback URL, or null when the spec is not `openai:http://127.0.0.1:PORT/…#MODEL`. */
function servedSpecPort(spec: string): number | null {
  const m = /^openai:http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):(\d{1,5})(?:\/[^#\s]*)?#\S.*$/.exec(spec);
  return m && portOk(Number(m[1])) ? Number(m[1]) : null;
}

function specProblem(m: Record<string, unknown>): string | null {
  const spec = m.spec;
  if (typeof spec !== 'string' || !/^(onnx|openai):/.test(spec)) return 'spec must be onnx:<dir> or openai:…#…';
  if (m.form === 'onnx') {
    if (!spec.startsWith('onnx:') || !isAbsolute(spec.slice(5)))
      return 'spec of an onnx model must be onnx:<absolute dir>';
    if (m.server !== null) return 'an onnx model has no server (server must be null)';
    return null;
  }
  const port = servedSpecPort(spec);
  if (port === null)
    return 'spec of a served model must be openai:http://127.0.0.1:PORT/v1#MODEL (Quarry serves on loopback only)';
  const s = m.server as ServerInfo | null;
  const expected = s ? (s.tunnel ? s.tunnel.localPort : s.port) : port;
  if (port !== expected) return `spec's port ${port} is not the server's (${expected})`;
  return null;
}

/** The path of the first string in `v` holding a control character (a terminal escape, a newline), or null. */
function controlCharAt(v: unknown, path: string): string | null {
  if (typeof v === 'string') return /[\u0000-\u001f\u007f]/.test(v) ? path : null;
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) {
      const at = controlCharAt(x, `${path}[${i}]`);
      if (at) return at;
    }
  } else if (isObj(v)) {
    for (const [k, x] of Object.entries(v)) {
      const at = controlCharAt(x, path ? `${path}.${k}` : k);
      if (at) return at;
    }
  }
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
function registeredModelProblem(m: unknown): string | null {
  if (!isObj(m)) return 'a model entry must be an object';
  if (typeof m.name !== 'string' || modelNameProblem(m.name)) return `bad name ${JSON.stringify(m.name)}`;
  if (typeof m.spec !== 'string' || !/^(onnx|openai):/.test(m.spec)) return 'spec must be onnx:<dir> or openai:…#…';
  if (m.form !== 'onnx' && m.form !== 'served') return 'form must be "onnx" or "served"';
  if (typeof m.loadedAt !== 'string') return 'loadedAt must be a string';
  const problem =
    provenanceProblem(m.provenance) ??
    parityProblem(m.parity) ??
    serverProblem(m.server) ??
    specProblem(m) ??
    (Array.isArray(m.evaluations) ? m.evaluations.map(evaluationProblem).find((p) => p) : 'evaluations must be a list');
  if (problem) return problem;
  const ctl = controlCharAt(m, '');
  return ctl ? `${ctl} holds a control character` : null;
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

/** The registry of one workspace. Each change reads the file anew, so the CLI and the editor can both write it. */
export class ModelRegistry {
  readonly file: string;

  constructor(workspace: string) {
    this.file = quarryPath(workspace, 'modelsRegistry');
  }

  /** Every model; an absent file is an empty registry, a bad one an error naming the file and the problem. */
  read(): ModelRegistryDoc {
    if (!existsSync(this.file)) return { schema: MODELS_SCHEMA, models: [] };
    let text: string;
    try {
      text = readRegularFileSync(this.file, MAX_REGISTRY_BYTES);
    } catch (err) {
      if (err instanceof FileReadError && err.code === 'ENOENT') return { schema: MODELS_SCHEMA, models: [] };
      throw new ModelRegistryError((err as Error).message);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
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
    writeJsonAtomicSync(this.file, doc, 1);
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
