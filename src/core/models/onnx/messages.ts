// Messages between the model (main thread) and its generation worker.
import type { ChatMessage, FinishReason, ModelErrorKind, SamplingOptions } from '../types';
import type { ModelFiles } from './files';

export interface WorkerInit {
  files: ModelFiles;
  /** onnxruntime intra-op threads. */
  threads: number;
  /** Int32Array over a SharedArrayBuffer: the id of the job to stop, read between decoding steps. */
  abortFlag: SharedArrayBuffer;
}

/** Ends the worker cleanly: the running job stops at its next step, the session is released, the thread exits. */
export interface CloseJob {
  type: 'close';
}

/** Written to the abort flag by close(): every job counts as aborted. */
export const ABORT_ALL = -1;

export interface GenerateJob {
  type: 'generate';
  id: number;
  messages: ChatMessage[];
  sampling: SamplingOptions;
}

/** Where the time of one generation went, measured inside the worker. */
export interface OnnxTimings {
  promptTokens: number;
  completionTokens: number;
  /** Rendering the chat template and tokenizing the prompt. */
  encodeMs: number;
  /** The first session.run over the whole prompt. */
  prefillMs: number;
  /** The session.run calls after the first, one per generated token. */
  decodeRunMs: number;
  /** Every session.run together (prefill + decode). */
  runMs: number;
  /** The whole generation in the worker, from receiving the job to the result. */
  loopMs: number;
  /** From receiving the job to the first generated token. */
  firstTokenMs: number | null;
}

export interface JobResult {
  text: string;
  finishReason: Exclude<FinishReason, 'error'>;
  stopString: string | null;
  /** The generated token ids (an end-of-sequence token that ended generation is not included). */
  tokens: number[];
  onnx: OnnxTimings;
}

export type WorkerMessage =
  | { type: 'ready'; inputs: string[]; outputs: string[] }
  | { type: 'load-error'; message: string }
  | { type: 'text'; id: number; delta: string }
  | { type: 'done'; id: number; result: JobResult }
  | { type: 'error'; id: number; kind: ModelErrorKind; message: string };
