// What a model directory must hold, read and checked before any worker starts, so a wrong path or a missing file is
// a ModelError('load') that names the file instead of an exception from deep inside onnxruntime or the tokenizer.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ModelError } from '../types';

/** The parts of config.json the decoder loop needs. */
export interface DecoderShape {
  layers: number;
  kvHeads: number;
  headDim: number;
  /** Context length; generation stops there. */
  maxPositions: number;
}

export interface ModelFiles {
  dir: string;
  modelPath: string;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
  chatTemplate: string;
  shape: DecoderShape;
  /** Token ids that end generation (generation_config.json / config.json eos_token_id, plus the tokenizer's eos). */
  eosIds: number[];
  /** generation_config.json max_new_tokens, when present. */
  defaultMaxTokens: number | null;
}

function readJson(dir: string, name: string, required: boolean): Record<string, unknown> | null {
  const path = join(dir, name);
  if (!existsSync(path)) {
    if (required) throw new ModelError('load', `the model directory ${dir} has no ${name}`);
    return null;
  }
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (err) {
    throw new ModelError('load', `${path} is not valid JSON: ${(err as Error).message}`);
  }
}

function positiveInt(config: Record<string, unknown>, key: string, dir: string): number {
  const v = config[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
    throw new ModelError('load', `config.json in ${dir} has no usable ${key} (got ${JSON.stringify(v)})`);
  }
  return v;
}

function ids(value: unknown): number[] {
  if (typeof value === 'number' && Number.isInteger(value)) return [value];
  if (Array.isArray(value)) return value.filter((v): v is number => typeof v === 'number' && Number.isInteger(v));
  return [];
}

/** The chat template, from tokenizer_config.json or a chat_template.jinja file beside it (newer exports). */
function chatTemplate(dir: string, config: Record<string, unknown>): string {
  const t = config.chat_template;
  if (typeof t === 'string' && t.trim()) return t;
  if (Array.isArray(t)) {
    const named = t.find(
      (e): e is { name: string; template: string } =>
        typeof e === 'object' &&
        e !== null &&
        (e as { name?: unknown }).name === 'default' &&
        typeof (e as { template?: unknown }).template === 'string',
    );
    if (named) return named.template;
  }
  const file = join(dir, 'chat_template.jinja');
  if (existsSync(file)) return readFileSync(file, 'utf8');
  throw new ModelError(
    'load',
    `the model in ${dir} has no chat template (tokenizer_config.json chat_template or chat_template.jinja)`,
  );
}

export function readModelFiles(dirArg: string): ModelFiles {
  const dir = resolve(dirArg);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new ModelError('load', `no model directory at ${dir}`);
  }
  if (!st.isDirectory())
    throw new ModelError(
      'load',
      `${dir} is a file; an onnx model is a directory holding model.onnx, tokenizer.json and config.json`,
    );
  const modelPath = join(dir, 'model.onnx');
  if (!existsSync(modelPath)) throw new ModelError('load', `the model directory ${dir} has no model.onnx`);
  const config = readJson(dir, 'config.json', true)!;
  const tokenizerJson = readJson(dir, 'tokenizer.json', true)!;
  const tokenizerConfig = readJson(dir, 'tokenizer_config.json', true)!;
  const generation = readJson(dir, 'generation_config.json', false) ?? {};

  const heads = positiveInt(config, 'num_attention_heads', dir);
  const headDim =
    typeof config.head_dim === 'number'
      ? positiveInt(config, 'head_dim', dir)
      : positiveInt(config, 'hidden_size', dir) / heads;
  if (!Number.isInteger(headDim))
    throw new ModelError('load', `config.json in ${dir}: hidden_size is not a multiple of num_attention_heads`);
  const shape: DecoderShape = {
    layers: positiveInt(config, 'num_hidden_layers', dir),
    kvHeads: typeof config.num_key_value_heads === 'number' ? positiveInt(config, 'num_key_value_heads', dir) : heads,
    headDim,
    maxPositions:
      typeof config.max_position_embeddings === 'number' ? positiveInt(config, 'max_position_embeddings', dir) : 32768,
  };

  const eos = new Set([...ids(generation.eos_token_id), ...ids(config.eos_token_id)]);
  const eosToken = tokenizerConfig.eos_token;
  const eosName = typeof eosToken === 'string' ? eosToken : (eosToken as { content?: unknown } | null)?.content;
  const added = Array.isArray(tokenizerJson.added_tokens)
    ? (tokenizerJson.added_tokens as { id: number; content: string }[])
    : [];
  const eosAdded = added.find((t) => t.content === eosName);
  if (eosAdded) eos.add(eosAdded.id);
  if (eos.size === 0) throw new ModelError('load', `the model in ${dir} names no end-of-sequence token (eos_token_id)`);
  const maxNew = generation.max_new_tokens;

  return {
    dir,
    modelPath,
    tokenizerJson,
    tokenizerConfig,
    chatTemplate: chatTemplate(dir, tokenizerConfig),
    shape,
    eosIds: [...eos].sort((a, b) => a - b),
    defaultMaxTokens: typeof maxNew === 'number' && maxNew > 0 ? maxNew : null,
  };
}
