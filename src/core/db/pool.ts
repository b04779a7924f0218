// A pool of killable SQL worker processes. better-sqlite3 is synchronous and cannot be interrupted, so a statement
// past its budget is stopped by SIGKILLing the process it runs in; a warm spare takes its place at once.
// With `pipeline` > 1 a worker is handed several statements at once and runs them one after another, so it never
// waits a round trip to the parent between two statements (batch callers: exec-batch, eval).
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { ExecRequest, ExecResult } from './types';
import type { GroupRequest, WorkerMessage, WorkerRequest } from './protocol';
import { failure } from './runStatement';
import { DEFAULT_TIMEOUT_MS, WORKER_OLD_SPACE_MB, WORKER_DATA_LIMIT_BYTES } from './limits';

interface SqlPoolOptions {
  /** Worker processes running statements at once. Default: the number of CPUs. */
  size?: number;
  /** Idle pre-started workers that replace killed ones without a start-up delay. Default 1. */
  spares?: number;
  /** Path of the worker script; default sqlWorker.js beside this module (or one directory up, for dist/bench). */
  workerPath?: string;
  /** Data-segment limit of each worker, bytes (Linux with prlimit(1) only); 0 turns it off. */
  memoryLimitBytes?: number;
  /**
   * Statements handed to one worker at a time (default 1). The worker runs them in order; each one's budget starts
   * when the previous one's result reaches the pool (or at dispatch for the first), so a budget is never shorter than
   * the statement's own run time, and a timeout always blames the statement that was running. Statements a killed
   * worker had not started are run on another worker.
   */
  pipeline?: number;
}

interface BatchOptions {
  onProgress?: (done: number, total: number) => void;
}

/**
 * What a group's worker kept: one reducer value per statement that ran, in order; `stopped` is set when the group
 * ended before its reducer did — the statement at index `values.length` timed out or its worker died (the failure says
 * which) — and the statements after it did not run.
 */
export interface GroupOutcome {
  values: unknown[];
  stopped?: ExecResult;
}

export interface SqlPool {
  exec(req: ExecRequest, signal?: AbortSignal): Promise<ExecResult>;
  /**
   * Runs groups of statements (see GroupRequest) concurrently across the pool, each group on one worker with every
   * statement under its own budget, as a pipelined statement is; outcomes are in input order.
   */
  execGroups(groups: GroupRequest[]): Promise<GroupOutcome[]>;
  /** Runs every request concurrently across the pool; results are in input order. */
  execBatch(reqs: ExecRequest[], opts?: BatchOptions): Promise<ExecResult[]>;
  /** Kills every worker and waits until each has exited. Pending requests are rejected. */
  close(): Promise<void>;
  /** Process ids in service: the running workers first, then the spares (killed ones are left out at once). */
  pids(): number[];
}

interface Job {
  id: number;
  /** The statement running (or next to run): the job's own, or the current one of its group. */
  req: ExecRequest;
  /** Set for a group job: the group and the reducer values its worker has sent so far. */
  group?: { request: GroupRequest; values: unknown[] };
  resolve: (r: ExecResult) => void;
  resolveGroup?: (o: GroupOutcome) => void;
  reject: (e: Error) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  started: number;
  timer?: NodeJS.Timeout;
}

interface Worker {
  child: ChildProcess;
  ready: boolean;
  /** Statements sent to this worker and not yet answered, in the order it runs them; the first is running. */
  jobs: Job[];
  /** Set when the pool itself killed this worker, so its exit is expected. */
  retired: boolean;
  exited: Promise<void>;
}

function defaultWorkerPath(): string {
  const beside = join(__dirname, 'sqlWorker.js');
  return existsSync(beside) ? beside : join(__dirname, '..', 'sqlWorker.js');
}

/** A util-linux tool by its usual paths (Linux only), or null where it is not installed. */
function linuxTool(name: string): string | null {
  return process.platform === 'linux'
    ? ([`/usr/bin/${name}`, `/bin/${name}`].find((p) => existsSync(p)) ?? null)
    : null;
}
/** prlimit(1), which starts the worker under a memory limit. */
const prlimitPath = linuxTool('prlimit');
/**
 * setpriv(1), which gives the worker a parent-death signal (PR_SET_PDEATHSIG) before node starts: the kernel SIGKILLs
 * it the moment the pool's process dies, however it dies. Without it the worker watches its parent from a thread
 * (parentWatch.ts). QUARRY_NO_PDEATHSIG=1 forces that fallback (the orphan tests run both).
 */
const setprivPath = process.env.QUARRY_NO_PDEATHSIG === '1' ? null : linuxTool('setpriv');

function abortError(): Error {
  const err = new Error('the SQL request was cancelled');
  err.name = 'AbortError';
  return err;
}

export function createSqlPool(opts: SqlPoolOptions = {}): SqlPool {
  const size = Math.max(1, opts.size ?? cpus().length);
  const spareCount = Math.max(0, opts.spares ?? 1);
  const depth = Math.max(1, Math.floor(opts.pipeline ?? 1));
  const workerPath = opts.workerPath ?? defaultWorkerPath();
  const memoryLimit = opts.memoryLimitBytes ?? WORKER_DATA_LIMIT_BYTES;
  const nodeFlags = [`--max-old-space-size=${WORKER_OLD_SPACE_MB}`];
  // prlimit and setpriv exec the next command in place (same pid, same IPC descriptor, same parent), so the pool sees
  // an ordinary forked worker.
  const chain = [
    ...(prlimitPath && memoryLimit > 0 ? [prlimitPath, `--data=${Math.floor(memoryLimit)}`] : []),
    ...(setprivPath ? [setprivPath, '--pdeathsig', 'KILL', '--'] : []),
    process.execPath,
    ...nodeFlags,
  ];
  const launch = { execPath: chain[0], execArgv: chain.slice(1) };
  const workerEnv: NodeJS.ProcessEnv = { ...process.env, SQLITE_USE_URI: '1' };
  // Tells the worker the kernel watches its parent for it, and which pid that parent is (see parentWatch.ts).
  if (setprivPath) workerEnv.QUARRY_POOL_PID = String(process.pid);
  else delete workerEnv.QUARRY_POOL_PID;
  const active: Worker[] = [];
  const spares: Worker[] = [];
  const everyWorker = new Set<Worker>();
  const queue: Job[] = [];
  let nextId = 1;
  let closed = false;
  let failedStarts = 0;
  let broken: string | null = null;

  function spawnWorker(): Worker {
    const child = fork(workerPath, [], {
      serialization: 'advanced',
      ...launch,
      env: workerEnv,
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
    let markExited!: () => void;
    const exited = new Promise<void>((r) => {
      markExited = r;
    });
    const w: Worker = { child, ready: false, jobs: [], retired: false, exited };
    everyWorker.add(w);
    idle(w);
    child.on('message', (msg: WorkerMessage) => {
      if (msg.type === 'ready') {
        w.ready = true;
        dispatch();
        return;
      }
      const job = w.jobs[0];
      if (!job || job.id !== msg.id) return;
      if (msg.type === 'step' && job.group) {
        job.group.values.push(msg.value);
        if (!msg.last) {
          // The group's next statement starts now, under its own budget.
          if (job.timer) clearTimeout(job.timer);
          job.timer = undefined;
          job.req = job.group.request.reqs[job.group.values.length];
          startHead(w);
          return;
        }
      }
      w.jobs.shift();
      settle(job, msg.type === 'result' ? msg.result : null);
      startHead(w);
      scheduleDispatch();
    });
    child.on('error', () => {
      /* reported through 'exit' */
    });
    child.on('exit', (code, signal) => {
      everyWorker.delete(w);
      markExited();
      if (w.retired) return;
      const [job, ...notStarted] = w.jobs;
      w.jobs = [];
      requeue(notStarted);
      // A worker that cannot even start would be respawned forever; give up and say why instead.
      if (!w.ready && ++failedStarts >= 3 && !broken) {
        broken = `the SQL worker process could not start (${workerPath}, ${signal ?? `exit code ${code}`})`;
        for (const q of queue.splice(0)) q.reject(new Error(broken));
      }
      if (w.ready) failedStarts = 0;
      if (!broken) replace(w);
      if (job) {
        settle(
          job,
          failure(
            'resource',
            `the SQL worker process stopped while running this statement (${signal ?? `exit code ${code}`}), ` +
              'most likely out of memory; it has been replaced',
            performance.now() - job.started,
          ),
        );
      }
      dispatch();
    });
    return w;
  }

  // An idle pool must not keep the caller's process alive (a forgotten close() would hang it); a pool with work must.
  type Channel = { ref?: () => void; unref?: () => void } | undefined;
  function idle(w: Worker): void {
    w.child.unref();
    (w.child.channel as Channel)?.unref?.();
  }
  function busy(w: Worker): void {
    w.child.ref();
    (w.child.channel as Channel)?.ref?.();
  }
  function updateRefs(): void {
    const working = queue.length > 0 || active.some((w) => w.jobs.length > 0);
    for (const w of everyWorker) (working ? busy : idle)(w);
  }

  function kill(w: Worker): void {
    w.retired = true;
    w.child.kill('SIGKILL');
  }

  /** Statements a worker was handed but never started go back to the front of the queue, in their order. */
  function requeue(jobs: Job[]): void {
    for (const j of jobs) {
      if (j.timer) clearTimeout(j.timer);
      j.timer = undefined;
      // A group whose worker was stopped (another statement's cancellation) starts over on its next worker.
      if (j.group) {
        j.group.values = [];
        j.req = j.group.request.reqs[0];
      }
    }
    queue.unshift(...jobs);
  }

  /** Takes `w` out of service with its running statement; the statements queued behind it run elsewhere. */
  function retire(w: Worker): void {
    const notStarted = w.jobs.slice(1);
    w.jobs = [];
    kill(w);
    replace(w);
    requeue(notStarted);
  }

  /** Starts the budget of the statement now running on `w` (its first unanswered one). */
  function startHead(w: Worker): void {
    const job = w.jobs[0];
    if (!job || job.timer) return;
    job.started = performance.now();
    const budget = job.req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // setTimeout treats anything past 2^31-1 ms (Infinity included) as 1 ms: such budgets mean "no timeout".
    if (budget <= 0x7fffffff)
      job.timer = setTimeout(() => {
        if (w.jobs[0] !== job) return;
        retire(w);
        const ms = performance.now() - job.started;
        settle(job, failure('timeout', `query timed out after ${budget} ms and was stopped`, ms));
        dispatch();
      }, budget);
  }

  /** Takes `w` out of service and puts a warm spare (or a fresh worker) in its place. */
  function replace(w: Worker): void {
    const i = active.indexOf(w);
    const s = spares.indexOf(w);
    if (s >= 0) spares.splice(s, 1);
    if (closed) {
      if (i >= 0) active.splice(i, 1);
      return;
    }
    if (i >= 0) active[i] = spares.shift() ?? spawnWorker();
    while (spares.length < spareCount) spares.push(spawnWorker());
  }

  /** Resolves a job: a statement with its result; a group with its values (`result`: the failure that stopped it). */
  function settle(job: Job, result: ExecResult | null): void {
    if (job.timer) clearTimeout(job.timer);
    if (job.signal && job.onAbort) job.signal.removeEventListener('abort', job.onAbort);
    if (job.group)
      job.resolveGroup!(result ? { values: job.group.values, stopped: result } : { values: job.group.values });
    else job.resolve(result!);
  }

  function dispatch(): void {
    if (closed) return; // close() keeps the exiting workers referenced until their exits are seen
    assign();
    updateRefs();
  }

  /**
   * Hands queued statements to ready workers, the least loaded first, up to `depth` each; the statements a worker
   * gets in one go travel in one message.
   */
  function assign(): void {
    const handed = new Map<Worker, Job[]>();
    while (queue.length > 0) {
      let target: Worker | undefined;
      for (const w of active) {
        if (w.ready && w.jobs.length < depth && (!target || w.jobs.length < target.jobs.length)) target = w;
      }
      if (!target) break;
      const job = queue.shift()!;
      target.jobs.push(job);
      if (target.jobs.length === 1) startHead(target);
      handed.get(target)?.push(job) ?? handed.set(target, [job]);
    }
    for (const [w, jobs] of handed) {
      w.child.send({
        jobs: jobs.map((j) => (j.group ? { id: j.id, group: j.group.request } : { id: j.id, req: j.req })),
      } satisfies WorkerRequest);
    }
  }

  /**
   * Dispatches once the current turn of the event loop is over, so statements queued together (a batch, or the
   * follow-ups of several results read at once) go out together.
   */
  let dispatchScheduled = false;
  function scheduleDispatch(): void {
    if (dispatchScheduled) return;
    dispatchScheduled = true;
    setImmediate(() => {
      dispatchScheduled = false;
      dispatch();
    });
  }

  function exec(req: ExecRequest, signal?: AbortSignal): Promise<ExecResult> {
    if (closed) return Promise.reject(new Error('the SQL pool is closed'));
    if (broken) return Promise.reject(new Error(broken));
    if (signal?.aborted) return Promise.reject(abortError());
    return new Promise<ExecResult>((resolve, reject) => {
      const job: Job = { id: nextId++, req, resolve, reject, signal, started: performance.now() };
      if (signal) {
        job.onAbort = () => {
          const q = queue.indexOf(job);
          if (q >= 0) queue.splice(q, 1);
          const w = active.find((x) => x.jobs.includes(job));
          if (w) {
            // The statement may be running or about to: its worker is stopped; the others it held run elsewhere.
            w.jobs.splice(w.jobs.indexOf(job), 1);
            w.jobs.unshift(job);
            retire(w);
          }
          if (job.timer) clearTimeout(job.timer);
          reject(abortError());
          dispatch();
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      queue.push(job);
      scheduleDispatch();
    });
  }

  async function execBatch(reqs: ExecRequest[], batchOpts: BatchOptions = {}): Promise<ExecResult[]> {
    let done = 0;
    return Promise.all(
      reqs.map((r) =>
        exec(r).then((res) => {
          done++;
          batchOpts.onProgress?.(done, reqs.length);
          return res;
        }),
      ),
    );
  }

  function execGroup(request: GroupRequest): Promise<GroupOutcome> {
    if (closed) return Promise.reject(new Error('the SQL pool is closed'));
    if (broken) return Promise.reject(new Error(broken));
    if (request.reqs.length === 0) return Promise.resolve({ values: [] });
    return new Promise<GroupOutcome>((resolveGroup, reject) => {
      const job: Job = {
        id: nextId++,
        req: request.reqs[0],
        group: { request, values: [] },
        resolve: () => {},
        resolveGroup,
        reject,
        started: performance.now(),
      };
      queue.push(job);
      scheduleDispatch();
    });
  }

  async function close(): Promise<void> {
    closed = true;
    for (const job of queue.splice(0)) job.reject(new Error('the SQL pool was closed before this request ran'));
    const all = [...everyWorker];
    for (const w of all) {
      for (const job of w.jobs.splice(0)) {
        if (job.timer) clearTimeout(job.timer);
        job.reject(new Error('the SQL pool was closed while this request ran'));
      }
      busy(w); // keeps the caller alive until the exit is seen, so close() really resolves
      kill(w);
    }
    active.length = 0;
    spares.length = 0;
    await Promise.all(all.map((w) => w.exited));
  }

  for (let i = 0; i < size; i++) active.push(spawnWorker());
  for (let i = 0; i < spareCount; i++) spares.push(spawnWorker());

  return {
    exec,
    execBatch,
    execGroups: (groups) => Promise.all(groups.map(execGroup)),
    close,
    pids: () =>
      [...active, ...spares]
        .filter((w) => !w.retired)
        .map((w) => w.child.pid)
        .filter((p): p is number => p !== undefined),
  };
}
