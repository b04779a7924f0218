// Making a chat model from a spec string. The agent loop, `quarry ask` and `quarry bench` all come through here.
import { resolve } from 'node:path';
import type { ChatModel } from './types';
import { ModelError } from './types';
import { parseModelSpec } from './spec';
import { createOpenAIModel, type OpenAIModelOptions } from './openai';

export * from './types';
export { parseModelSpec, formatModelSpec, SPEC_FORMS } from './spec';
export type { ModelSpec, OpenAISpec, OnnxSpec } from './spec';
export { createOpenAIModel, estimateUsage } from './openai';
export type { OpenAIModelOptions, RetryInfo } from './openai';
export type { RetryPolicy } from './retry';

export interface CreateModelOptions extends OpenAIModelOptions {
  /** Relative onnx: directories are resolved against this (default: the process's working directory). */
  cwd?: string;
}

interface OnnxModule {
  createOnnxModel(dir: string): Promise<ChatModel>;
}

export async function createModel(spec: string, opts: CreateModelOptions = {}): Promise<ChatModel> {
  const parsed = parseModelSpec(spec);
  if (parsed.kind === 'openai') return createOpenAIModel(parsed, opts);
  const dir = resolve(opts.cwd ?? process.cwd(), parsed.dir);
  let mod: OnnxModule;
  try {
    // Loaded on first use: onnxruntime-node is large and native, and most runs talk to a server instead.
    // @ts-ignore -- the onnx backend is built alongside; until it exists this import fails at run time, handled below.
    mod = (await import('./onnx/index')) as OnnxModule;
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new ModelError('load', `the onnx backend could not be loaded for ${spec} (${why.split('\n')[0]}); use an openai: spec meanwhile`);
  }
  if (typeof mod.createOnnxModel !== 'function') {
    throw new ModelError('load', 'the onnx backend module has no createOnnxModel(dir) export');
  }
  return mod.createOnnxModel(dir);
}
