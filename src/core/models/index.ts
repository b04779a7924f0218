// Making a chat model from a spec string. The agent loop, `quarry ask` and `quarry bench` all come through here.
import { resolve } from 'node:path';
import type { ChatModel } from './types';
import { ModelError } from './types';
import { parseModelSpec } from './spec';
import { createOpenAIModel, type OpenAIModelOptions } from './openai';
import type { OnnxModelOptions } from './onnx/index';

export * from './types';
export { parseModelSpec, formatModelSpec, SPEC_FORMS } from './spec';
export type { ModelSpec, OpenAISpec, OnnxSpec } from './spec';
export { createOpenAIModel, estimateUsage } from './openai';
export type { OpenAIModelOptions, RetryInfo } from './openai';
export type { RetryPolicy } from './retry';

export interface CreateModelOptions extends OpenAIModelOptions {
  /** Relative onnx: directories are resolved against this (default: the process's working directory). */
  cwd?: string;
  /** Passed to the onnx backend (threads, worker path). */
  onnx?: OnnxModelOptions;
}

export async function createModel(spec: string, opts: CreateModelOptions = {}): Promise<ChatModel> {
  const parsed = parseModelSpec(spec);
  if (parsed.kind === 'openai') return createOpenAIModel(parsed, opts);
  const dir = resolve(opts.cwd ?? process.cwd(), parsed.dir);
  let mod: typeof import('./onnx/index.js');
  try {
    // Loaded on first use: onnxruntime-node is large and native, and most runs talk to a server instead.
    mod = await import('./onnx/index.js');
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new ModelError('load', `the onnx backend could not be loaded for ${spec}: ${why.split('\n')[0]}`);
  }
  if (typeof mod.createOnnxModel !== 'function') {
    throw new ModelError('load', 'the onnx backend module has no createOnnxModel(dir) export');
  }
  return mod.createOnnxModel(dir, opts.onnx);
}
