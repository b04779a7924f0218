// The `onnx:<dir>` backend: a local decoder-only model exported to ONNX (Hugging Face Optimum's decoder layout),
// with its tokenizer.json and chat template, run by onnxruntime-node in a worker thread.
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ModelError, type ChatModel, type GenerateRequest, type GenerateResult } from '../types';
import { readModelFiles } from './files';
import {
  ABORT_ALL,
  type CloseJob,
  type GenerateJob,
  type OnnxTimings,
  type WorkerInit,
  type WorkerMessage,
} from './messages';

/** How long close() waits for the worker to stop its job and exit before terminating it. */
const CLOSE_GRACE_MS = 10_000;

export type { OnnxTimings } from './messages';
export { readModelFiles } from './files';
export { PromptEncoder } from './prompt';

export interface OnnxModelOptions {
  /** onnxruntime intra-op threads. Default 1: a small decoder steps fastest on one thread. */
  threads?: number;
  /** The worker script; default onnxWorker.js beside this bundle (dist/), or worker.js beside this module. */
  workerPath?: string;
}

/** What generate() resolves to: the contract's result plus where the worker's time went. */
export interface OnnxGenerateResult extends GenerateResult {
  /** The generated token ids (without an end-of-sequence token that ended generation). */
  tokens: number[];
  onnx: OnnxTimings;
}

export interface OnnxChatModel extends ChatModel {
  generate(req: GenerateRequest): Promise<OnnxGenerateResult>;
  /** The model's input names, as onnxruntime reports them. */
  readonly inputNames: readonly string[];
}

function defaultWorkerPath(): string {
  const candidates = [
    join(__dirname, 'onnxWorker.js'),
    join(__dirname, '..', 'onnxWorker.js'),
    join(__dirname, 'worker.js'),
  ];
  return candidates.find((p) => existsSync(p)) ?? candidates[0];
}

function abortError(): Error {
  const err = new Error('the generation was cancelled');
  err.name = 'AbortError';
  return err;
}

interface Pending {
  id: number;
  req: GenerateRequest;
  started: number;
  resolve: (r: OnnxGenerateResult) => void;
  reject: (e: Error) => void;
}

interface Running {
  worker: Worker;
  /** Set when this object stopped the worker itself. */
  stopping: boolean;
}

export async function createOnnxModel(dir: string, opts: OnnxModelOptions = {}): Promise<OnnxChatModel> {
  const files = readModelFiles(dir);
  const workerPath = opts.workerPath ?? defaultWorkerPath();
  if (!existsSync(workerPath))
    throw new ModelError('load', `the ONNX worker script is missing (${workerPath}); run the build`);
  const threads = Math.max(1, Math.floor(opts.threads ?? 1));
  const abortBuffer = new SharedArrayBuffer(4);
  const abortFlag = new Int32Array(abortBuffer);

  let current: Pending | null = null;
  const queue: Pending[] = [];
  let nextId = 1;
  let closed = false;
  let inputNames: string[] = [];
  let live: Running | null = null;
  let starting: Promise<Running> | null = null;

  function start(): Promise<Running> {
    const init: WorkerInit = { files, threads, abortFlag: abortBuffer };
    const worker = new Worker(workerPath, { workerData: init });
    const running: Running = { worker, stopping: false };
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (m: WorkerMessage) => {
        if (m.type === 'ready') {
          ready = true;
          inputNames = m.inputs;
          resolve(running);
          return;
        }
        if (m.type === 'load-error') {
          running.stopping = true;
          void worker.terminate();
          reject(new ModelError('load', m.message));
          return;
        }
        onMessage(m);
      });
      worker.on('error', (err) => {
        if (!ready) reject(new ModelError('load', `the ONNX worker failed to start: ${err.message}`));
        else failCurrent(new ModelError('server', `the ONNX worker failed: ${err.message}`));
      });
      worker.on('exit', (code) => {
        if (!ready)
          reject(new ModelError('load', `the ONNX worker exited while loading ${files.modelPath} (exit code ${code})`));
        if (worker === running.worker && live === running) live = null;
        if (!running.stopping)
          failCurrent(new ModelError('server', `the ONNX worker stopped unexpectedly (exit code ${code})`));
      });
    });
  }

  live = await start();

  async function worker(): Promise<Running> {
    if (live) return live;
    starting ??= start().finally(() => {
      starting = null;
    });
    live = await starting;
    return live;
  }

  function settle(p: Pending): void {
    if (current === p) current = null;
    cleanup.get(p)?.();
    cleanup.delete(p);
    void pump();
  }

  function failCurrent(err: Error): void {
    const p = current;
    if (!p) return;
    settle(p);
    p.reject(err);
  }

  function onMessage(m: WorkerMessage): void {
    const p = current;
    if (!p || !('id' in m) || m.id !== p.id) return;
    if (m.type === 'text') {
      try {
        p.req.onText?.(m.delta);
      } catch {
        /* a listener's error must not break generation */
      }
      return;
    }
    settle(p);
    if (m.type === 'done') {
      const r = m.result;
      p.resolve({
        text: r.text,
        finishReason: r.finishReason,
        stopString: r.stopString,
        usage: { promptTokens: r.onnx.promptTokens, completionTokens: r.onnx.completionTokens },
        timings: { totalMs: performance.now() - p.started, firstTokenMs: r.onnx.firstTokenMs },
        tokens: r.tokens,
        onnx: r.onnx,
      });
    } else if (m.type === 'error') {
      p.reject(new ModelError(m.kind, m.message));
    }
  }

  const cleanup = new Map<Pending, () => void>();

  async function pump(): Promise<void> {
    if (current || closed) return;
    const p = queue.shift();
    if (!p) return;
    current = p;
    try {
      const w = await worker();
      if (current !== p) return; // aborted while the worker restarted
      const job: GenerateJob = { type: 'generate', id: p.id, messages: p.req.messages, sampling: p.req.sampling };
      w.worker.postMessage(job);
    } catch (err) {
      if (current === p) {
        settle(p);
        p.reject(err as Error);
      }
    }
  }

  /** Stops a pending or running request: the worker drops it at its next step; the caller is answered at once. */
  function cancel(p: Pending, err: Error): void {
    const i = queue.indexOf(p);
    if (i >= 0) {
      queue.splice(i, 1);
      cleanup.get(p)?.();
      cleanup.delete(p);
      p.reject(err);
      return;
    }
    if (current !== p) return;
    Atomics.store(abortFlag, 0, p.id);
    // The worker still finishes its current step; later jobs wait for it by id, so nothing mixes.
    settle(p);
    p.reject(err);
  }

  /**
   * Asks the worker to finish: terminate() while a session.run is in flight takes the whole process down, so the
   * worker stops its job, releases the session and exits by itself; terminate() is the fallback for a stuck thread.
   */
  async function stopWorker(w: Worker): Promise<void> {
    Atomics.store(abortFlag, 0, ABORT_ALL);
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    const close: CloseJob = { type: 'close' };
    try {
      w.postMessage(close);
    } catch {
      return;
    }
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), CLOSE_GRACE_MS);
    });
    const stuck = await Promise.race([exited.then(() => false), gaveUp]);
    clearTimeout(timer);
    if (stuck) await w.terminate();
  }

  const model: OnnxChatModel = {
    spec: `onnx:${dir}`,
    get inputNames() {
      return inputNames;
    },
    generate(req: GenerateRequest): Promise<OnnxGenerateResult> {
      if (closed) return Promise.reject(new ModelError('server', `the model ${dir} has been closed`));
      if (req.signal?.aborted) return Promise.reject(abortError());
      return new Promise((resolve, reject) => {
        const p: Pending = { id: nextId++, req, started: performance.now(), resolve, reject };
        const onAbort = () => cancel(p, abortError());
        req.signal?.addEventListener('abort', onAbort, { once: true });
        const timer =
          req.timeoutMs && req.timeoutMs > 0
            ? setTimeout(
                () => cancel(p, new ModelError('timeout', `generation took longer than ${req.timeoutMs} ms`)),
                req.timeoutMs,
              )
            : null;
        cleanup.set(p, () => {
          req.signal?.removeEventListener('abort', onAbort);
          if (timer) clearTimeout(timer);
        });
        queue.push(p);
        void pump();
      });
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const err = new ModelError('server', `the model ${dir} was closed`);
      for (const p of queue.splice(0)) {
        cleanup.get(p)?.();
        p.reject(err);
      }
      if (current) failCurrent(err);
      const w = live ?? (starting ? await starting.catch(() => null) : null);
      live = null;
      if (w) {
        w.stopping = true;
        await stopWorker(w.worker);
      }
    },
  };
  return model;
}
