// The generation worker (a worker_threads thread, bundled as dist/onnxWorker.js): owns the onnxruntime session and
// the tokenizer, so prefill and decoding never block the thread that started it (the editor's extension host).
import { parentPort, workerData } from 'node:worker_threads';
import { ModelError } from '../types';
import { Decoder } from './decoder';
import { Aborted, Generator } from './generate';
import { ABORT_ALL, type CloseJob, type GenerateJob, type WorkerInit, type WorkerMessage } from './messages';

if (!parentPort) throw new Error('the ONNX generation worker must run as a worker thread');
const port = parentPort;
const init = workerData as WorkerInit;
const abortFlag = new Int32Array(init.abortFlag);
const post = (m: WorkerMessage) => port.postMessage(m);

async function main(): Promise<void> {
  let decoder: Decoder;
  let generator: Generator;
  try {
    decoder = await Decoder.load(init.files.modelPath, init.files.shape, init.threads);
    generator = new Generator(init.files, decoder);
  } catch (err) {
    post({ type: 'load-error', message: (err as Error).message });
    return;
  }
  // Jobs arrive one at a time (the model queues them), but chain them anyway so two can never share the cache.
  let chain = Promise.resolve();
  port.on('message', (job: GenerateJob | CloseJob) => {
    if (job.type === 'close') {
      // Terminating a thread inside session.run aborts the whole process (onnxruntime throws from its teardown), so
      // the worker ends itself: after the running job has stopped, release the session and let the thread exit.
      chain = chain.then(async () => {
        await decoder.release().catch(() => undefined);
        port.close();
      });
      return;
    }
    if (job.type !== 'generate') return;
    chain = chain.then(() => runJob(generator, job));
  });
  post({ type: 'ready', inputs: [...decoder.inputNames], outputs: [...decoder.outputNames] });
}

async function runJob(generator: Generator, job: GenerateJob): Promise<void> {
  try {
    const result = await generator.run(job.messages, job.sampling, {
      aborted: () => {
        const flag = Atomics.load(abortFlag, 0);
        return flag === job.id || flag === ABORT_ALL;
      },
      onText: (delta) => post({ type: 'text', id: job.id, delta }),
    });
    post({ type: 'done', id: job.id, result });
  } catch (err) {
    if (err instanceof Aborted) post({ type: 'error', id: job.id, kind: 'timeout', message: 'aborted' });
    else if (err instanceof ModelError) post({ type: 'error', id: job.id, kind: err.kind, message: err.message });
    else
      post({ type: 'error', id: job.id, kind: 'server', message: `ONNX generation failed: ${(err as Error).message}` });
  }
}

void main();
