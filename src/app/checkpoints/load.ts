// Loading a checkpoint into the editor, the one flow `quarry checkpoints load|unload` and "Quarry: Load Checkpoint…"
// both run. Local (default): the checkpoint is exported to ONNX with the project's Python (quarry_trainer.export) into
// .quarry/models/<name>/, its greedy tokens are compared with transformers' (parity), and `onnx:<dir>` is registered.
// Served: an OpenAI-compatible server is started for it (serveCommand.ts), waited for until /health answers, checked
// against transformers greedy (quarry_trainer.parity served), and `openai:http://127.0.0.1:<port>/v1#<model>` is
// registered; unloading stops the server (and the SSH tunnel of a remote one). On another host both the server and the
// parity check run there, beside the checkpoint (over the same ssh): the checkpoint need not be on this machine.
// Parity blocks nothing: its result is stored and shown. Servers are started and stopped by serverProcess.ts, which
// records who each process is and signals only a process group Quarry started.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createOnnxModel } from '../../core/models/onnx';
import { checkParity, type ParityOutcome, type ParityReference } from '../../core/models/onnx/parity';
import { hasHfWeights } from '../../core/training/checkpoints';
import {
  ModelRegistry,
  modelNameProblem,
  type ParityResult,
  type RegisteredModel,
  type ServerInfo,
} from '../../core/training/modelRegistry';
import { sshDestinationProblem, sshOptionsProblem } from '../../core/training/sshSafety';
import { checkpointProvenance, defaultModelName } from './provenance';
import { serveCommand, type ServerKind } from './serveCommand';
import {
  identityOf,
  newServerId,
  SERVER_ID_ENV,
  startServerProcess,
  stopServer,
  type StopReport,
} from './serverProcess';
import { openTunnel, parseRemoteStart, remoteHfCheckArgs, remoteRunArgs, remoteStartArgs } from './sshTunnel';

import { quarryPath } from '../../core/workspace/quarryLayout';

export class LoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LoadError';
  }
}

interface PythonEnv {
  python: string;
  /** The checkout's root: its trainer/ goes first on PYTHONPATH so the Python side matches this build. */
  repoRoot?: string;
  /** More environment for the Python processes (PYTHONPATH entries go after the trainer's). */
  env?: Record<string, string>;
}

interface LoadOptions extends PythonEnv {
  workspace: string;
  checkpoint: string;
  name?: string;
  jobId?: string;
  /** Serve it instead of exporting it: the server and, for another host, the SSH destination. */
  serve?: {
    kind: ServerKind;
    host?: string;
    /**
     * Extra ssh options (e.g. ['-p', '2222'] or ['-F', CONFIG]). Kept with the server so unload reaches the same host
     * when they are all on the allow-list (core/training/sshSafety.ts); otherwise unload asks for them again.
     */
    sshOptions?: string[];
    /** The jobs target the host and options came from: kept instead of the options, which unload rebuilds from it. */
    target?: string;
    remoteCheckpoint?: string;
    /** Environment for the server on the remote host (e.g. CUDA_VISIBLE_DEVICES, PYTHONPATH). */
    remoteEnv?: Record<string, string>;
  } | null;
  /** How long a server may take to answer (default 10 minutes: a large model loads slowly). */
  serveTimeoutMs?: number;
  onStage?: (message: string) => void;
  signal?: AbortSignal;
}

interface LoadResult {
  model: RegisteredModel;
  cases: Array<Pick<ParityOutcome, 'index' | 'equal' | 'firstDivergence'>>;
}

function pythonEnvVars(p: PythonEnv): NodeJS.ProcessEnv {
  const trainer = p.repoRoot ? join(p.repoRoot, 'trainer') : undefined;
  const paths = [
    trainer && existsSync(join(trainer, 'quarry_trainer')) ? trainer : undefined,
    p.env?.PYTHONPATH,
    process.env.PYTHONPATH,
  ].filter(Boolean);
  return {
    ...process.env,
    ...p.env,
    PYTHONWARNINGS: 'ignore',
    ...(paths.length ? { PYTHONPATH: paths.join(':') } : {}),
  };
}

type RunResult = { status: number | null; stdout: string; stderr: string; error?: string };

/** Runs the project's Python to the end; stdout and stderr kept, never throws for a failing exit. */
function runPython(p: PythonEnv, args: string[], signal?: AbortSignal): Promise<RunResult> {
  return runToEnd(p.python, args, pythonEnvVars(p), signal);
}

/** Runs a program to the end; stdout and stderr kept, never throws for a failing exit. */
function runToEnd(program: string, args: string[], env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<RunResult> {
  return new Promise((done) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(program, args, { env, stdio: ['ignore', 'pipe', 'pipe'], signal });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err) => done({ status: null, stdout, stderr, error: err.message }));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

function lastLines(text: string, n = 6): string {
  return text.trim().split('\n').slice(-n).join('\n');
}

/**
 * The exit code of quarry_trainer's export and served parity when a weights file was refused as unsafe (a pickle that
 * would run code: quarry_trainer/parity.py UNSAFE_EXIT); its stderr says which file, and Python is not the problem.
 */
export const UNSAFE_CHECKPOINT_EXIT = 3;

/** The parity outcomes as the registry keeps them. */
function parityResult(
  outcomes: ReadonlyArray<Pick<ParityOutcome, 'index' | 'equal' | 'firstDivergence'>>,
  against: ParityResult['against'],
  now = new Date(),
): ParityResult {
  const first = outcomes.find((o) => !o.equal);
  return {
    equal: !first,
    cases: outcomes.length,
    differing: outcomes.filter((o) => !o.equal).length,
    firstDivergence: first?.firstDivergence ? { case: first.index, ...first.firstDivergence } : null,
    against,
    checkedAt: now.toISOString(),
  };
}

/** Exports a Hugging Face checkpoint to ONNX in `out` and checks greedy parity with onnxruntime. */
async function exportWithParity(
  p: PythonEnv,
  checkpoint: string,
  out: string,
  signal?: AbortSignal,
): Promise<{ outcomes: ParityOutcome[]; seconds: number }> {
  const run = await runPython(p, ['-m', 'quarry_trainer.export', '--checkpoint', checkpoint, '--out', out], signal);
  if (run.status === UNSAFE_CHECKPOINT_EXIT)
    throw new LoadError(`the ONNX export did not load the checkpoint: ${lastLines(run.stderr, 1)}`);
  if (run.error || run.status !== 0) {
    throw new LoadError(
      `the ONNX export failed: ${run.error ?? (lastLines(run.stderr) || `exit ${run.status}`)}\n` +
        "(the exporter needs the project's Python with the export extra: npm run setup:python; " +
        'quarry doctor checks it)',
    );
  }
  const summary = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { reference: string; seconds: number };
  const reference = JSON.parse(readFileSync(summary.reference, 'utf8')) as ParityReference;
  const model = await createOnnxModel(out);
  try {
    return { outcomes: await checkParity(model, reference), seconds: summary.seconds };
  } finally {
    await model.close();
  }
}

/** A port nobody listens on now, on 127.0.0.1. */
function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const srv = createServer();
    srv.once('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => done(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `url` until it answers 200; fails early when `stillRunning` says the server is gone. */
async function waitForHttp(
  url: string,
  opts: { timeoutMs: number; stillRunning?: () => boolean; log?: string; signal?: AbortSignal },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const logTail = () => (opts.log && existsSync(opts.log) ? `\n${lastLines(readFileSync(opts.log, 'utf8'), 8)}` : '');
  for (;;) {
    if (opts.signal?.aborted) throw new LoadError('cancelled while waiting for the server');
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
      if (res.ok) return;
    } catch {
      /* not listening yet */
    }
    if (opts.stillRunning && !opts.stillRunning())
      throw new LoadError(`the server exited before answering${logTail()}`);
    if (Date.now() > deadline)
      throw new LoadError(`the server did not answer ${url} within ${Math.round(opts.timeoutMs / 1000)} s${logTail()}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function serveAndCheck(
  o: LoadOptions,
  name: string,
  dir: string,
): Promise<{ server: ServerInfo; spec: string; outcomes: LoadResult['cases'] }> {
  const kind = o.serve!.kind;
  const host = o.serve!.host ?? 'local';
  const remotePort = await freePort();
  const checkpointThere = o.serve!.remoteCheckpoint ?? resolve(o.checkpoint);
  const cmd = serveCommand({ kind, checkpoint: checkpointThere, name, port: remotePort, python: o.python });
  const log = join(dir, 'server.log');
  const id = newServerId();
  let started: { pid: number; procStart?: string; cmdline?: string[] };
  let localPort = remotePort;
  let tunnel: ServerInfo['tunnel'] = null;
  o.onStage?.(`starting ${kind} server: ${cmd.argv.join(' ')}`);
  if (host === 'local') {
    // transformers' /v1/models lists the hub cache: an empty one of its own keeps it answering offline.
    const hubCache = join(dir, 'hf-hub-cache');
    mkdirSync(hubCache, { recursive: true });
    started = startServerProcess(cmd.argv, log, { ...pythonEnvVars(o), HF_HUB_CACHE: hubCache }, id);
  } else {
    const remoteLog = `/tmp/quarry-serve-${name}-${remotePort}.log`;
    const argv = [...Object.entries(o.serve!.remoteEnv ?? {}).map(([k, v]) => `${k}=${v}`), ...cmd.argv];
    const remoteArgv = argv.length > cmd.argv.length ? ['env', ...argv] : cmd.argv;
    const startArgs = remoteStartArgs(host, remoteArgv, remoteLog, o.serve!.sshOptions, { [SERVER_ID_ENV]: id });
    const r = spawnSync('ssh', startArgs, { encoding: 'utf8', timeout: 60_000 });
    const there = r.status === 0 ? parseRemoteStart(r.stdout ?? '') : null;
    if (!there)
      throw new LoadError(
        `could not start the server on ${host}: ${lastLines(r.stderr ?? '', 3) || r.error?.message || r.stdout}`,
      );
    started = there;
    localPort = await freePort();
    const tunnelSpec = { host, localPort, remotePort, sshOptions: o.serve!.sshOptions };
    const tpid = openTunnel(tunnelSpec, join(dir, 'tunnel.log'), { [SERVER_ID_ENV]: id });
    tunnel = { pid: tpid, localPort, ...identityOf(tpid) };
  }
  const given = o.serve!.sshOptions ?? [];
  const keep = host !== 'local' && !o.serve!.target && given.length > 0;
  const keepable = keep && sshOptionsProblem(given) === null;
  const server: ServerInfo = {
    kind,
    host,
    ...started,
    port: remotePort,
    command: cmd.argv,
    log,
    tunnel,
    id,
    ...(host !== 'local' && o.serve!.target ? { target: o.serve!.target } : {}),
    ...(keepable ? { sshOptions: given } : {}),
    ...(keep && !keepable ? { sshOptionsLeftOut: true } : {}),
  };
  const pid = server.pid;
  const base = `http://127.0.0.1:${localPort}`;
  try {
    o.onStage?.(`waiting for ${base}${cmd.healthPath}`);
    await waitForHttp(base + cmd.healthPath, {
      timeoutMs: o.serveTimeoutMs ?? 600_000,
      stillRunning: host === 'local' ? () => alive(pid) : undefined,
      log: host === 'local' ? log : undefined,
      signal: o.signal,
    });
  } catch (err) {
    stopServer(server, o.workspace, o.serve!.sshOptions);
    throw err;
  }
  // What the server's command line is once it answers (a server may retitle itself while it starts).
  if (host === 'local') Object.assign(server, identityOf(pid));
  // transformers' greedy decode runs where the checkpoint is: here, or on the host (reaching its server directly).
  const parityArgs = (ckpt: string, url: string) => [
    '-m',
    'quarry_trainer.parity',
    'served',
    '--checkpoint',
    ckpt,
    '--base-url',
    url,
    '--model',
    cmd.modelName,
  ];
  let run: RunResult;
  if (host === 'local') {
    o.onStage?.('checking greedy parity against transformers');
    run = await runPython(o, parityArgs(resolve(o.checkpoint), `${base}/v1`), o.signal);
  } else {
    o.onStage?.(`checking greedy parity against transformers on ${host}, beside the checkpoint`);
    const argv = [o.python, ...parityArgs(checkpointThere, `http://127.0.0.1:${remotePort}/v1`)];
    const env = { PYTHONWARNINGS: 'ignore', ...(o.serve!.remoteEnv ?? {}) };
    run = await runToEnd('ssh', remoteRunArgs(host, argv, env, o.serve!.sshOptions), process.env, o.signal);
  }
  let outcomes: LoadResult['cases'] = [];
  if (run.status === 0 || run.status === 1) {
    outcomes = (JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { cases: LoadResult['cases'] }).cases;
  } else {
    o.onStage?.(`parity could not run: ${run.error ?? lastLines(run.stderr, 3)}`);
  }
  return { server, spec: `openai:${base}/v1#${cmd.modelName}`, outcomes };
}

/** Whether the checkpoint to serve on another host is there (it need not be on this machine). */
function remoteHasHfWeights(host: string, dir: string, sshOptions?: string[]): boolean {
  const r = spawnSync('ssh', remoteHfCheckArgs(host, dir, sshOptions), { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new LoadError(`cannot reach ${host}: ${lastLines(r.stderr ?? '', 3) || r.error?.message}`);
  return r.stdout.trim() === 'yes';
}

export async function loadCheckpoint(o: LoadOptions): Promise<LoadResult> {
  const checkpoint = resolve(o.workspace, o.checkpoint);
  const remote = o.serve?.host && o.serve.host !== 'local' ? o.serve.host : null;
  const hostBad = remote ? sshDestinationProblem(remote) : null;
  if (hostBad) throw new LoadError(`the ssh host ${hostBad}`);
  const there = remote ? (o.serve!.remoteCheckpoint ?? checkpoint) : checkpoint;
  if (remote ? !remoteHasHfWeights(remote, there, o.serve!.sshOptions) : !hasHfWeights(checkpoint))
    throw new LoadError(
      `${there}${remote ? ` on ${remote}` : ''} is not a Hugging Face checkpoint (config.json and model weights); ` +
        '`quarry checkpoints list` says how to get one from a sharded checkpoint',
    );
  const name = o.name ?? defaultModelName(checkpoint);
  const bad = modelNameProblem(name);
  if (bad) throw new LoadError(`bad model name ${JSON.stringify(name)}: ${bad}`);
  const registry = new ModelRegistry(o.workspace);
  const existing = registry.get(name);
  if (existing?.server) {
    const stopped = stopServer(existing.server, o.workspace);
    for (const s of stopped.said) o.onStage?.(s);
  }
  const provenance = checkpointProvenance(checkpoint, { workspace: o.workspace, jobId: o.jobId });
  const dir = quarryPath(o.workspace, 'models', name);
  mkdirSync(dir, { recursive: true });
  let spec: string;
  let server: ServerInfo | null = null;
  let cases: LoadResult['cases'];
  let against: ParityResult['against'];
  if (o.serve) {
    const served = await serveAndCheck({ ...o, checkpoint }, name, dir);
    ({ spec, server } = served);
    cases = served.outcomes;
    against = 'served';
  } else {
    o.onStage?.(`exporting ${checkpoint} to ONNX in ${dir}`);
    const { outcomes } = await exportWithParity(o, checkpoint, dir, o.signal);
    cases = outcomes;
    spec = `onnx:${dir}`;
    against = 'onnx';
  }
  const model: RegisteredModel = {
    name,
    spec,
    form: o.serve ? 'served' : 'onnx',
    loadedAt: new Date().toISOString(),
    provenance,
    parity: cases.length ? parityResult(cases, against) : null,
    server,
    evaluations: existing?.evaluations ?? [],
  };
  registry.put(model);
  return { model, cases: cases.map((c) => ({ index: c.index, equal: c.equal, firstDivergence: c.firstDivergence })) };
}

/**
 * Stops a model's server and removes the model from the registry; the exported files and evaluations stay on disk.
 * The server is stopped only when it is shown to be the one Quarry started; when something was left running for that
 * reason (or could not be reached) the entry is kept (`refused`) and what was found is said. `forget` removes the
 * entry without signalling anything; `sshOptions` are the user's own options for the host, given again.
 */
export function unloadModel(
  workspace: string,
  name: string,
  opts: { sshOptions?: readonly string[]; forget?: boolean } = {},
): { model: RegisteredModel; said: string[]; refused: boolean; removed: boolean } {
  const registry = new ModelRegistry(workspace);
  const model = registry.require(name);
  const stopped: StopReport =
    model.server && !opts.forget ? stopServer(model.server, workspace, opts.sshOptions) : { said: [], refused: false };
  if (stopped.refused) return { model, ...stopped, removed: false };
  registry.remove(name);
  return { model, ...stopped, removed: true };
}
