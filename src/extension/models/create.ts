// A ChatModel for the current settings: the core's openai and onnx backends, or VS Code's own chat models.
import { isAbsolute, join, resolve } from 'node:path';
import type { ChatModel } from '../../core/models/types';
import { ModelError } from '../../core/models/types';
import type { QuarrySettings } from '../settings';
import type { Log } from '../log';
import { listServerModels } from './serverModels';
import { withEditorKeyHint } from './connectionReport';
import { DEMO_MODEL_LABEL } from './demoModel';

interface ModelContext {
  settings: QuarrySettings;
  extensionPath: string;
  /** The first workspace folder, against which relative paths in settings are resolved. */
  workspaceDir: string | undefined;
  /** The key kept in SecretStorage for the openai server's origin. */
  apiKey: string | undefined;
  log: Log;
  signal?: AbortSignal;
}

/** The bundled demo model (media/models/tiny-sql) unless quarry.model.onnxPath names a directory. */
export function onnxModelDir(
  settings: QuarrySettings,
  extensionPath: string,
  workspaceDir: string | undefined,
): string {
  const p = settings.model.onnxPath;
  if (p === '') return join(extensionPath, 'media', 'models', 'tiny-sql');
  return isAbsolute(p) ? p : resolve(workspaceDir ?? extensionPath, p);
}

/** Short text for the status bar before a model is made: "openai · qwen", "onnx · tiny-sql", "vscode-lm". */
export function settingsModelLabel(settings: QuarrySettings): string {
  const m = settings.model;
  if (m.backend === 'openai') return `openai · ${m.name || '(first served)'}`;
  if (m.backend === 'onnx') {
    const dir = m.onnxPath.split(/[\\/]/).filter(Boolean).pop() ?? m.onnxPath;
    return `onnx · ${m.onnxPath === '' ? DEMO_MODEL_LABEL : dir}`;
  }
  return `vscode-lm · ${m.name || '(first available)'}`;
}

function checkAbort(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    const e = new Error('creating the model was cancelled');
    e.name = 'AbortError';
    throw e;
  }
}

export async function createModelForSettings(ctx: ModelContext): Promise<ChatModel> {
  const { settings, log } = ctx;
  checkAbort(ctx.signal);
  // The core backends are imported on first use: onnxruntime-node is large and native, and activation stays cheap.
  if (settings.model.backend === 'vscode-lm') {
    const { selectLmModel, createVscodeLmModel, describeLmModel } = await import('./vscodeLm');
    const chat = await selectLmModel(settings.model.name);
    checkAbort(ctx.signal);
    log.info(`model: vscode-lm ${describeLmModel(chat)} (${chat.id})`);
    return createVscodeLmModel(chat);
  }
  const core = await import('../../core/models/index');
  if (settings.model.backend === 'openai') {
    let name = settings.model.name;
    if (name === '') {
      const served = await listServerModels(settings.model.baseUrl, { apiKey: ctx.apiKey, signal: ctx.signal });
      if (served.length === 0) {
        throw new ModelError('unknown-model', `${settings.model.baseUrl} lists no models; set quarry.model.name`);
      }
      name = served[0];
      log.info(`model: quarry.model.name is empty, using the first model ${settings.model.baseUrl} serves: ${name}`);
    }
    const spec = `openai:${settings.model.baseUrl}#${name}`;
    checkAbort(ctx.signal);
    log.info(`model: ${spec}`);
    const model = await core.createModel(spec, {
      apiKey: ctx.apiKey,
      // The editor's key is the one in SecretStorage; environment keys of the editor process are not used silently.
      env: {},
      timeoutMs: settings.agent.modelTimeoutMs,
      maxResponseChars: settings.agent.maxResponseChars,
      onRetry: (r) => log.warn(`model: retry ${r.attempt} in ${r.delayMs} ms (${r.reason})`),
    });
    return {
      spec: model.spec,
      generate: (req) =>
        model.generate(req).catch((err: unknown) => {
          throw err instanceof ModelError && err.kind === 'auth'
            ? new ModelError('auth', withEditorKeyHint(err.message))
            : err;
        }),
      close: () => model.close(),
    };
  }
  const dir = onnxModelDir(settings, ctx.extensionPath, ctx.workspaceDir);
  log.info(`model: onnx:${dir}`);
  return core.createModel(`onnx:${dir}`, { onnx: { workerPath: join(ctx.extensionPath, 'dist', 'onnxWorker.js') } });
}
