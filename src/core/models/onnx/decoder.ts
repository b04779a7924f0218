// The onnxruntime side: loads model.onnx, checks it has the decoder-with-cache signature of Hugging Face Optimum's
// export, and runs it one step at a time — the whole prompt first, then one token per step, each step's
// present.{i}.key/value fed back as the next step's past_key_values.{i}.key/value.
import * as ort from 'onnxruntime-node';
import { ModelError } from '../types';
import type { DecoderShape } from './files';

interface StepOutput {
  /** Logits of the last position only. */
  logits: Float32Array;
  vocab: number;
}

function int64(values: ArrayLike<number>, dims: number[]): ort.Tensor {
  const data = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) data[i] = BigInt(values[i]);
  return new ort.Tensor('int64', data, dims);
}

/** Names the cache inputs/outputs a model of this shape must have. */
function expectedSignature(layers: number): { inputs: string[]; outputs: string[] } {
  const inputs = ['input_ids', 'attention_mask'];
  const outputs = ['logits'];
  for (let i = 0; i < layers; i++) {
    inputs.push(`past_key_values.${i}.key`, `past_key_values.${i}.value`);
    outputs.push(`present.${i}.key`, `present.${i}.value`);
  }
  return { inputs, outputs };
}

export class Decoder {
  private past: Record<string, ort.Tensor> = {};
  private length = 0;

  private constructor(
    private readonly session: ort.InferenceSession,
    readonly shape: DecoderShape,
    private readonly hasPositionIds: boolean,
  ) {}

  static async load(modelPath: string, shape: DecoderShape, threads: number): Promise<Decoder> {
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(modelPath, {
        executionProviders: ['cpu'],
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
      });
    } catch (err) {
      throw new ModelError('load', `onnxruntime could not load ${modelPath}: ${(err as Error).message}`);
    }
    const want = expectedSignature(shape.layers);
    const missingIn = want.inputs.filter((n) => !session.inputNames.includes(n));
    const missingOut = want.outputs.filter((n) => !session.outputNames.includes(n));
    if (missingIn.length || missingOut.length) {
      await session.release().catch(() => undefined);
      const list = (names: readonly string[]) =>
        names.slice(0, 4).join(', ') + (names.length > 4 ? `, … (${names.length} in all)` : '');
      throw new ModelError(
        'load',
        `${modelPath} is not a decoder with a key/value cache in Hugging Face Optimum's layout` +
          ` (${shape.layers} layers per config.json): ${missingIn.length ? `missing inputs ${list(missingIn)}` : ''}` +
          `${missingIn.length && missingOut.length ? '; ' : ''}` +
          `${missingOut.length ? `missing outputs ${list(missingOut)}` : ''}` +
          `; it has inputs ${list(session.inputNames)}`,
      );
    }
    return new Decoder(session, shape, session.inputNames.includes('position_ids'));
  }

  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }
  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  /** Forget the cache: the next step starts a new sequence. */
  reset(): void {
    const empty = new Float32Array(0);
    const dims = [1, this.shape.kvHeads, 0, this.shape.headDim];
    this.past = {};
    for (let i = 0; i < this.shape.layers; i++) {
      this.past[`past_key_values.${i}.key`] = new ort.Tensor('float32', empty, dims);
      this.past[`past_key_values.${i}.value`] = new ort.Tensor('float32', empty, dims);
    }
    this.length = 0;
  }

  /** Tokens in the cache so far. */
  get cached(): number {
    return this.length;
  }

  /** Runs `tokens` after everything cached; returns the logits of the last one and keeps the new cache. */
  async step(tokens: readonly number[]): Promise<StepOutput> {
    const n = tokens.length;
    const total = this.length + n;
    const feeds: Record<string, ort.Tensor> = {
      ...this.past,
      input_ids: int64(tokens, [1, n]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
    };
    if (this.hasPositionIds) {
      const pos = new BigInt64Array(n);
      for (let i = 0; i < n; i++) pos[i] = BigInt(this.length + i);
      feeds.position_ids = new ort.Tensor('int64', pos, [1, n]);
    }
    const out = await this.session.run(feeds);
    for (let i = 0; i < this.shape.layers; i++) {
      this.past[`past_key_values.${i}.key`] = out[`present.${i}.key`];
      this.past[`past_key_values.${i}.value`] = out[`present.${i}.value`];
    }
    this.length = total;
    const logits = out.logits;
    const vocab = logits.dims[logits.dims.length - 1];
    const all = logits.data as Float32Array;
    return { logits: all.subarray(all.length - vocab), vocab };
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
