// What every editor feature shares: the log, the settings, the sandbox pool, model creation for the current settings
// (openai, onnx, vscode.lm), API keys, the trajectory store path, and hooks one feature offers to another.
// Nothing here does heavy work when created: the pool and the models are made on first use.
import * as vscode from 'vscode';
import { isAbsolute, join } from 'node:path';
import type { SqlPool } from '../core/db/pool';
import type { ChatModel, GenerateRequest, GenerateResult } from '../core/models/types';
import { createLog, type Log } from './log';
import { ApiKeys } from './secrets';
import { MODEL_SETTING_KEYS, readSettings, type QuarrySettings } from './settings';
import { createModelForSettings, onnxModelDir, settingsModelLabel } from './models/create';

export type { Log } from './log';

/** Opens the Ask flow for a database (its absolute path), or lets the user pick one when none is given. */
type AskHook = (dbPath?: string) => Thenable<void> | Promise<void> | void;
/** Opens the replay view on a trajectory file (default: the workspace store), optionally on one trajectory id. */
type OpenReplayHook = (file?: string, trajectoryId?: string) => Thenable<void> | Promise<void> | void;

export interface Services {
  readonly context: vscode.ExtensionContext;
  readonly log: Log;
  readonly apiKeys: ApiKeys;
  /** A fresh, checked snapshot of every quarry.* setting (see settings.ts for the fallbacks). */
  settings(): QuarrySettings;
  /** The first workspace folder's path, if a folder is open. */
  workspaceDir(): string | undefined;
  /**
   * The shared sandbox pool (SQL runs in killable worker processes, never on the extension host's thread). Made on
   * first use, closed on deactivate; callers never close it.
   */
  pool(): Promise<SqlPool>;
  /**
   * A model for the current settings. Callers may close() it when done: for the onnx backend the loaded model is
   * shared between callers and that close() is a no-op (it is freed when the settings change or on deactivate).
   * Throws ModelError (kinds in src/core/models/types.ts) with a message a person can act on.
   */
  createModel(signal?: AbortSignal): Promise<ChatModel>;
  /** "openai · qwen", "vscode-lm · Copilot · GPT-4o" (after first use), "onnx · tiny-sql (bookshop demo)". */
  modelLabel(): string;
  /** Like modelLabel(), but for vscode-lm asks VS Code which chat model the settings select (sends no request). */
  resolveModelLabel(): Promise<string>;
  /**
   * Absolute path of the JSONL trajectory store (quarry.trajectories.store under the first folder; global storage
   * without one).
   */
  trajectoryStorePath(): string;
  /** Fires when the model to use may have changed (settings, API key, VS Code's chat models). */
  readonly onDidChangeModel: vscode.Event<void>;
  /** Set by the Ask feature; the Databases view calls it. Undefined until that feature registers. */
  ask?: AskHook;
  /** Set by the replay feature; Ask and chat call it to show a trajectory. */
  openReplay?: OpenReplayHook;
}

/** Runs `f` at most once per `ms` burst, after the burst ends (settings change events come in flurries). */
function debounce(f: () => void, ms: number): { run: () => void; dispose: () => void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    run: () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        timer = undefined;
        f();
      }, ms);
    },
    dispose: () => {
      if (timer) clearTimeout(timer);
    },
  };
}

/** A shared onnx model with in-flight tracking, so replacing it never cuts a generation short. */
class SharedModel {
  private inFlight = 0;
  private retired = false;
  constructor(
    readonly key: string,
    readonly model: ChatModel,
    private readonly log: Log,
  ) {}

  lease(): ChatModel {
    const self = this;
    return {
      spec: this.model.spec,
      async generate(req: GenerateRequest): Promise<GenerateResult> {
        self.inFlight++;
        try {
          return await self.model.generate(req);
        } finally {
          self.inFlight--;
          if (self.retired && self.inFlight === 0) self.closeNow();
        }
      },
      async close(): Promise<void> {
        /* shared: freed by the services */
      },
    };
  }

  retire(): void {
    this.retired = true;
    if (this.inFlight === 0) this.closeNow();
  }

  private closeNow(): void {
    this.model.close().catch((e: unknown) => this.log.warn(`closing ${this.model.spec}: ${String(e)}`));
  }
}

/** The services plus what only extension.ts calls: shutdown() on deactivate (closes the pool's worker processes). */
export type ServicesHandle = Services & { shutdown(): Promise<void> };

export function createServices(context: vscode.ExtensionContext): ServicesHandle {
  const log = createLog('Quarry');
  const apiKeys = new ApiKeys(context.secrets, log);
  const changed = new vscode.EventEmitter<void>();
  let poolPromise: Promise<SqlPool> | null = null;
  let shared: SharedModel | null = null;
  let sharedLoading: Promise<SharedModel> | null = null;
  let lmLabel: string | null = null;

  const settings = (): QuarrySettings => {
    const cfg = vscode.workspace.getConfiguration('quarry');
    return readSettings((key) => cfg.get(key));
  };
  const workspaceDir = (): string | undefined => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;

  const modelChanged = (): void => {
    lmLabel = null;
    shared?.retire();
    shared = null;
    sharedLoading = null;
    changed.fire();
  };
  const fireSoon = debounce(modelChanged, 150);

  context.subscriptions.push(
    log,
    changed,
    { dispose: () => fireSoon.dispose() },
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (MODEL_SETTING_KEYS.some((k) => e.affectsConfiguration(`quarry.${k}`))) fireSoon.run();
    }),
    apiKeys.onDidChange(() => fireSoon.run()),
  );
  if (vscode.lm?.onDidChangeChatModels) {
    context.subscriptions.push(
      vscode.lm.onDidChangeChatModels(() => {
        if (settings().model.backend === 'vscode-lm') fireSoon.run();
      }),
    );
  }

  const services: Services = {
    context,
    log,
    apiKeys,
    settings,
    workspaceDir,
    pool() {
      poolPromise ??= import('../core/db/pool').then(({ createSqlPool }) => {
        // The editor asks one question at a time; two workers keep a preview usable while the agent runs a query.
        const pool = createSqlPool({
          size: 2,
          spares: 1,
          workerPath: join(context.extensionPath, 'dist', 'sqlWorker.js'),
        });
        log.info('sandbox pool started (2 SQL worker processes + 1 spare)');
        return pool;
      });
      return poolPromise;
    },
    async createModel(signal) {
      const s = settings();
      const apiKey = s.model.backend === 'openai' ? await apiKeys.get(s.model.baseUrl) : undefined;
      const ctx = {
        settings: s,
        extensionPath: context.extensionPath,
        workspaceDir: workspaceDir(),
        apiKey,
        log,
        signal,
      };
      if (s.model.backend !== 'onnx') {
        const model = await createModelForSettings(ctx);
        if ('label' in model && typeof model.label === 'string') lmLabel = model.label;
        return model;
      }
      const key = onnxModelDir(s, context.extensionPath, workspaceDir());
      if (shared?.key === key) return shared.lease();
      // Loading an onnx model takes seconds; concurrent callers share one load.
      sharedLoading ??= createModelForSettings({ ...ctx, signal: undefined })
        .then((m) => {
          const sm = new SharedModel(key, m, log);
          shared = sm;
          return sm;
        })
        .finally(() => {
          sharedLoading = null;
        });
      const sm = await sharedLoading;
      if (signal?.aborted) {
        const e = new Error('creating the model was cancelled');
        e.name = 'AbortError';
        throw e;
      }
      return sm.lease();
    },
    modelLabel() {
      const s = settings();
      if (s.model.backend === 'vscode-lm' && lmLabel) return `vscode-lm · ${lmLabel}`;
      return settingsModelLabel(s);
    },
    async resolveModelLabel() {
      const s = settings();
      if (s.model.backend === 'vscode-lm' && !lmLabel) {
        try {
          const { selectLmModel, describeLmModel } = await import('./models/vscodeLm');
          lmLabel = describeLmModel(await selectLmModel(s.model.name));
        } catch {
          return `vscode-lm · ${s.model.name || 'none available'}`;
        }
      }
      return services.modelLabel();
    },
    trajectoryStorePath() {
      const store = settings().trajectories.store;
      if (isAbsolute(store)) return store;
      return join(workspaceDir() ?? context.globalStorageUri.fsPath, store);
    },
    onDidChangeModel: changed.event,
  };

  const shutdown = async (): Promise<void> => {
    shared?.retire();
    shared = null;
    const p = poolPromise;
    poolPromise = null;
    if (p)
      await p
        .then((pool) => pool.close())
        .catch(() => {
          /* workers already gone */
        });
  };
  context.subscriptions.push({ dispose: () => void shutdown() });
  return Object.assign(services, { shutdown });
}
