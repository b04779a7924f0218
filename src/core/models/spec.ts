// Model spec strings: the one way a model is named on the command line, in settings and in trajectory records.
//   openai:<baseURL>#<model>   any OpenAI-compatible server, e.g. openai:http://127.0.0.1:8000/v1#Qwen2.5-7B
//   onnx:<dir>                 a local ONNX model directory
import { ModelError } from './types';

export interface OpenAISpec {
  kind: 'openai';
  /** Without a trailing slash; `/chat/completions` and `/models` are appended to it. */
  baseURL: string;
  model: string;
  raw: string;
}

export interface OnnxSpec {
  kind: 'onnx';
  dir: string;
  raw: string;
}

export type ModelSpec = OpenAISpec | OnnxSpec;

export const SPEC_FORMS = 'openai:<baseURL>#<model> (e.g. openai:http://127.0.0.1:8000/v1#Qwen2.5-7B) or onnx:<dir>';

function bad(spec: string, why: string): ModelError {
  return new ModelError('bad-spec', `bad model spec ${JSON.stringify(spec)}: ${why}; expected ${SPEC_FORMS}`);
}

export function parseModelSpec(spec: string): ModelSpec {
  if (typeof spec !== 'string' || spec.trim() === '') throw bad(String(spec), 'it is empty');
  const raw = spec.trim();
  const colon = raw.indexOf(':');
  const scheme = colon < 0 ? '' : raw.slice(0, colon).toLowerCase();
  const rest = colon < 0 ? '' : raw.slice(colon + 1);
  if (scheme === 'openai') return parseOpenAI(raw, rest);
  if (scheme === 'onnx') {
    if (rest.trim() === '') throw bad(raw, 'onnx: needs a model directory');
    return { kind: 'onnx', dir: rest.trim(), raw };
  }
  if (scheme === 'http' || scheme === 'https')
    throw bad(raw, `a bare URL needs the openai: prefix and a #model, e.g. openai:${raw.split('#')[0]}#<model>`);
  throw bad(raw, colon < 0 ? 'it has no backend prefix' : `unknown backend ${JSON.stringify(raw.slice(0, colon))}`);
}

function parseOpenAI(raw: string, rest: string): OpenAISpec {
  // URLs have no use for a fragment here, so the first '#' separates the model (model names may contain ':' and '/').
  const hash = rest.indexOf('#');
  if (hash < 0) throw bad(raw, 'openai: needs #<model> after the base URL');
  const url = rest.slice(0, hash).trim();
  const model = rest.slice(hash + 1).trim();
  if (model === '') throw bad(raw, 'the model name after # is empty');
  if (url === '') throw bad(raw, 'the base URL is empty');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw bad(raw, `${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw bad(raw, `the base URL must be http(s), not ${parsed.protocol}`);
  if (parsed.search) throw bad(raw, 'the base URL must not carry a query string');
  return { kind: 'openai', baseURL: url.replace(/\/+$/, ''), model, raw };
}

export function formatModelSpec(spec: ModelSpec): string {
  return spec.kind === 'openai' ? `openai:${spec.baseURL}#${spec.model}` : `onnx:${spec.dir}`;
}
