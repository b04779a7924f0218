// The command that serves a checkpoint behind an OpenAI-compatible API, for each server Quarry knows, written from the
// servers' own CLI source:
// - transformers (CPU-only hosts): `transformers serve [FORCE_MODEL] --host --port --device` (transformers 5.10,
//   transformers/cli/serve.py; routes in transformers/cli/serving/server.py: POST /v1/chat/completions,
//   GET /v1/models, GET /health). A forced model pins the server: a request must name the model exactly as it was
//   given (serving/utils.py rejects any other name), so the registered model name is the checkpoint's path. It needs
//   the `openai` Python package (transformers' `serving` extra; the trainer's `serve` extra installs it).
// - vLLM (GPU hosts, the default there): `vllm serve MODEL_TAG --served-model-name NAME --host --port`
//   (vllm/entrypoints/cli/serve.py: usage "vllm serve [model_tag] [options]", options from make_arg_parser in
//   vllm/entrypoints/openai/cli_args.py; --served-model-name from vllm/engine/arg_utils.py). GET /health answers once
//   the engine is up.
// - SGLang (an option): `python -m sglang.launch_server --model-path --served-model-name --host --port`.
// Every server listens on 127.0.0.1 only: the editor reaches a remote one through an SSH tunnel, never the network.
import { dirname, join } from 'node:path';

export type ServerKind = 'transformers' | 'vllm' | 'sglang';
export const SERVER_KINDS: readonly ServerKind[] = ['transformers', 'vllm', 'sglang'];

interface ServeCommandOptions {
  kind: ServerKind;
  /** The checkpoint folder on the host that serves it. */
  checkpoint: string;
  /** The name the model is registered under (vLLM and SGLang answer to it). */
  name: string;
  port: number;
  /** The project's Python on that host: `transformers` is the console script beside it. */
  python: string;
}

interface ServeCommand {
  argv: string[];
  /** The model name requests must carry. */
  modelName: string;
  /** The path answering 200 once the model is loaded. */
  healthPath: string;
}

export function isServerKind(s: string): s is ServerKind {
  return (SERVER_KINDS as readonly string[]).includes(s);
}

export function serveCommand(o: ServeCommandOptions): ServeCommand {
  const port = String(o.port);
  if (o.kind === 'transformers') {
    const bin = dirname(o.python) === '.' ? 'transformers' : join(dirname(o.python), 'transformers');
    return {
      argv: [bin, 'serve', o.checkpoint, '--host', '127.0.0.1', '--port', port, '--device', 'cpu'],
      modelName: o.checkpoint,
      healthPath: '/health',
    };
  }
  if (o.kind === 'vllm') {
    return {
      argv: ['vllm', 'serve', o.checkpoint, '--served-model-name', o.name, '--host', '127.0.0.1', '--port', port],
      modelName: o.name,
      healthPath: '/health',
    };
  }
  return {
    argv: [
      o.python,
      '-m',
      'sglang.launch_server',
      '--model-path',
      o.checkpoint,
      '--served-model-name',
      o.name,
      '--host',
      '127.0.0.1',
      '--port',
      port,
    ],
    modelName: o.name,
    healthPath: '/health',
  };
}

/** The server to use when none is named: vLLM where there is a GPU, transformers' own server on a CPU-only host. */
export function defaultServerKind(hasGpu: boolean): ServerKind {
  return hasGpu ? 'vllm' : 'transformers';
}
