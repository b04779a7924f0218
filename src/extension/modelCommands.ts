// Commands about the model: switch it (VS Code chat models, the openai server's models, an onnx directory), test the
// connection, and set or clear the server's API key (SecretStorage only).
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import type { Services } from './services';
import type { ModelBackend } from './settings';
import { connectedText, describeConnectionFailure, type FixAction } from './models/connectionReport';
import { apiKeyOrigin } from './secrets';
import { DEMO_MODEL_LABEL } from './models/demoModel';
import { updateSetting } from './settingWriter';

async function useModel(backend: ModelBackend, changes: Record<string, unknown>): Promise<void> {
  for (const [k, v] of Object.entries(changes)) await updateSetting(k, v);
  await updateSetting('model.backend', backend);
}

interface ModelPick extends vscode.QuickPickItem {
  apply?: () => Promise<void>;
}

function separator(label: string): ModelPick {
  return { label, kind: vscode.QuickPickItemKind.Separator };
}

async function lmPicks(current: { backend: ModelBackend; name: string }): Promise<ModelPick[]> {
  const head = separator('VS Code chat models');
  if (!vscode.lm?.selectChatModels)
    return [head, { label: '$(circle-slash) This editor has no language-model API', alwaysShow: true }];
  const models = await vscode.lm.selectChatModels();
  if (models.length === 0) {
    return [
      head,
      {
        label: '$(info) None available',
        detail: 'Install and sign in to a language-model provider, e.g. GitHub Copilot Chat',
        alwaysShow: true,
      },
    ];
  }
  return [
    head,
    ...models.map(
      (m): ModelPick => ({
        label: `${current.backend === 'vscode-lm' && current.name === m.id ? '$(check) ' : ''}${m.name}`,
        description: `${m.vendor} · ${m.family}`,
        detail: m.id,
        apply: () => useModel('vscode-lm', { 'model.name': m.id }),
      }),
    ),
  ];
}

async function serverPicks(
  services: Services,
  current: { backend: ModelBackend; name: string },
  signal: AbortSignal,
): Promise<ModelPick[]> {
  const { baseUrl } = services.settings().model;
  const head = separator(`OpenAI-compatible server · ${baseUrl}`);
  const setUrl: ModelPick = {
    label: '$(link) Server URL…',
    description: baseUrl,
    apply: async () => {
      const url = await vscode.window.showInputBox({
        title: 'OpenAI-compatible server',
        prompt: 'Base URL, usually ending in /v1',
        value: baseUrl,
        validateInput: (v) => {
          try {
            const u = new URL(v);
            return /^https?:$/.test(u.protocol) ? null : 'http(s) URLs only';
          } catch {
            return 'not a URL';
          }
        },
      });
      if (url === undefined) return;
      await updateSetting('model.baseUrl', url.trim());
      await updateSetting('model.backend', 'openai');
      // Offer the new server's models at once.
      await vscode.commands.executeCommand('quarry.selectModel');
    },
  };
  try {
    const { listServerModels } = await import('./models/serverModels');
    const ids = await listServerModels(baseUrl, { apiKey: await services.apiKeys.get(baseUrl), signal });
    const picks = ids.map(
      (id): ModelPick => ({
        label: `${current.backend === 'openai' && current.name === id ? '$(check) ' : ''}${id}`,
        description: 'openai',
        apply: () => useModel('openai', { 'model.name': id }),
      }),
    );
    if (picks.length === 0) picks.push({ label: '$(info) The server lists no models', alwaysShow: true });
    return [head, ...picks, setUrl];
  } catch (err) {
    if (signal.aborted) return [];
    return [head, { label: '$(warning) Cannot list models', detail: (err as Error).message, alwaysShow: true }, setUrl];
  }
}

function onnxPicks(services: Services): ModelPick[] {
  const { onnxPath } = services.settings().model;
  return [
    separator('Local ONNX model'),
    {
      label: `${services.settings().model.backend === 'onnx' && onnxPath === '' ? '$(check) ' : ''}${DEMO_MODEL_LABEL}`,
      description: 'onnx · bundled',
      detail:
        'A demo of the bookshop sample (media/samples/bookshop.sqlite), offline; it cannot answer about other data',
      apply: () => useModel('onnx', { 'model.onnxPath': '' }),
    },
    {
      label: '$(folder-opened) Browse for an ONNX model directory…',
      description: onnxPath || undefined,
      apply: async () => {
        const picked = await vscode.window.showOpenDialog({
          canSelectFolders: true,
          canSelectFiles: false,
          canSelectMany: false,
          openLabel: 'Use this model',
          title: 'ONNX model directory (config.json, tokenizer.json, model.onnx)',
        });
        const dir = picked?.[0]?.fsPath;
        if (!dir) return;
        const missing = ['config.json', 'tokenizer.json'].filter((f) => !existsSync(`${dir}/${f}`));
        if (missing.length > 0) {
          void vscode.window.showErrorMessage(
            `Quarry: ${dir} is not an ONNX model directory (no ${missing.join(', ')}).`,
          );
          return;
        }
        await useModel('onnx', { 'model.onnxPath': dir });
      },
    },
  ];
}

/** Checkpoints loaded into the workspace's model registry (.quarry/models.json), with where each came from. */
async function registryPicks(services: Services): Promise<ModelPick[]> {
  const { registryModels, useRegisteredModel } = await import('./training/checkpointCommands');
  const { describeProvenance } = await import('../core/training/modelRegistry');
  const models = registryModels(services.workspaceDir());
  if (models.length === 0) return [];
  const s = services.settings().model;
  const inUse = (spec: string) =>
    spec ===
    (s.backend === 'onnx' ? `onnx:${s.onnxPath}` : s.backend === 'openai' ? `openai:${s.baseUrl}#${s.name}` : '');
  return [
    separator('Loaded checkpoints · .quarry/models.json'),
    ...models.map(
      (m): ModelPick => ({
        label: `${inUse(m.spec) ? '$(check) ' : ''}${m.name}`,
        description: `${m.form} · ${describeProvenance(m)}`,
        detail: m.spec,
        apply: () => useRegisteredModel(m),
      }),
    ),
  ];
}

async function selectModel(services: Services): Promise<void> {
  const s = services.settings();
  const current = { backend: s.model.backend, name: s.model.name };
  const qp = vscode.window.createQuickPick<ModelPick>();
  qp.title = 'Quarry: Switch Model';
  qp.placeholder = `Current: ${services.modelLabel()}`;
  qp.matchOnDescription = true;
  qp.matchOnDetail = true;
  qp.busy = true;
  const abort = new AbortController();
  let lm: ModelPick[] = [];
  let server: ModelPick[] = [
    separator(`OpenAI-compatible server · ${s.model.baseUrl}`),
    { label: '$(loading~spin) Listing models…', alwaysShow: true },
  ];
  const onnx = onnxPicks(services);
  const loaded = await registryPicks(services);
  // The group of the backend in use comes first, the model in use first within it (marked with a check): the picker
  // opens on it, so Enter keeps it.
  const checkedFirst = (group: ModelPick[]): ModelPick[] => {
    const i = group.findIndex((p) => p.label.startsWith('$(check)'));
    return i <= 1 ? group : [group[0], group[i], ...group.slice(1, i), ...group.slice(i + 1)];
  };
  const render = (): void => {
    const groups =
      s.model.backend === 'openai'
        ? [server, lm, onnx]
        : s.model.backend === 'onnx'
          ? [onnx, lm, server]
          : [lm, server, onnx];
    // Loaded checkpoints come first when one of them is in use, else after the group in use.
    const ordered = loaded.some((p) => p.label.startsWith('$(check)'))
      ? [loaded, ...groups]
      : [groups[0], loaded, ...groups.slice(1)];
    qp.items = ordered.flatMap(checkedFirst);
  };
  render();
  qp.show();
  const loads = [
    lmPicks(current).then((p) => {
      lm = p;
      render();
    }),
    serverPicks(services, current, abort.signal).then((p) => {
      server = p;
      render();
    }),
  ];
  void Promise.allSettled(loads).then(() => {
    qp.busy = false;
  });
  const chosen = await new Promise<ModelPick | undefined>((resolve) => {
    qp.onDidAccept(() => resolve(qp.selectedItems[0]));
    qp.onDidHide(() => resolve(undefined));
  });
  abort.abort();
  qp.dispose();
  if (!chosen?.apply) return;
  try {
    await chosen.apply();
    services.log.info(`model switched: ${services.modelLabel()}`);
  } catch (err) {
    services.log.showError('cannot switch the model', err);
  }
}

async function runFix(action: FixAction | undefined, services: Services): Promise<void> {
  if (action === 'Set API Key…') await vscode.commands.executeCommand('quarry.setApiKey');
  else if (action === 'Switch Model…') await vscode.commands.executeCommand('quarry.selectModel');
  else if (action === 'Open Settings')
    await vscode.commands.executeCommand('workbench.action.openSettings', 'quarry.model');
  else if (action === 'Open Log') services.log.show();
}

/** The outcome of a connection test, also returned to callers of the command (tests, other features). */
export interface ConnectionTestResult {
  ok: boolean;
  label: string;
  /** "connected, <model>, N ms" when ok; the failure's title otherwise. */
  message: string;
  /** The model's reply to the ping, when ok (the log has it; the notification does not). */
  reply?: string;
  detail?: string;
}

const PING_PROMPT = 'Reply with the single word OK.';

async function testConnection(services: Services, opts: { quiet?: boolean } = {}): Promise<ConnectionTestResult> {
  const backend = services.settings().model.backend;
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Quarry: testing ${services.modelLabel()}…`,
      cancellable: true,
    },
    async (_progress, token) => {
      const abort = new AbortController();
      const sub = token.onCancellationRequested(() => abort.abort());
      let label = services.modelLabel();
      try {
        const model = await services.createModel(abort.signal);
        label = services.modelLabel();
        try {
          const started = Date.now();
          const res = await model.generate({
            messages: [{ role: 'user', content: PING_PROMPT }],
            sampling: { temperature: 0, maxTokens: 16 },
            signal: abort.signal,
            timeoutMs: Math.min(services.settings().agent.modelTimeoutMs, 60_000),
          });
          const reply = res.text.trim().slice(0, 80) || '(an empty reply)';
          const text = connectedText(label, Date.now() - started);
          services.log.info(`test connection: ${text}; the model replied ${JSON.stringify(reply)}`);
          if (!opts.quiet) void vscode.window.showInformationMessage(`Quarry: ${text}`);
          return { ok: true, label, message: text, reply };
        } finally {
          await model.close().catch(() => {
            /* nothing to free */
          });
        }
      } catch (err) {
        const report = describeConnectionFailure(backend, err);
        services.log.error(`test connection (${label}): ${report.title}`, err);
        if (!opts.quiet) {
          void vscode.window
            .showErrorMessage(`Quarry: ${report.title} — ${report.detail}`, ...report.actions)
            .then((pick) => runFix(pick, services));
        }
        return { ok: false, label, message: report.title, detail: report.detail };
      } finally {
        sub.dispose();
      }
    },
  );
}

async function setApiKey(services: Services, given?: string): Promise<boolean> {
  const { baseUrl } = services.settings().model;
  const origin = apiKeyOrigin(baseUrl);
  const key =
    given ??
    (await vscode.window.showInputBox({
      title: `Quarry: API key for ${origin}`,
      prompt:
        "Kept in VS Code's secret storage (the OS keychain where there is one), never in settings or logs. " +
        'Sent only to this server.',
      password: true,
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim() === '' ? 'The key is empty' : null),
    }));
  if (key === undefined) return false;
  await services.apiKeys.set(baseUrl, key);
  services.log.info(`API key set for ${origin}`);
  if (given === undefined) void vscode.window.showInformationMessage(`Quarry: API key saved for ${origin}.`);
  return true;
}

async function clearApiKey(services: Services, opts: { quiet?: boolean } = {}): Promise<boolean> {
  const { baseUrl } = services.settings().model;
  const origin = apiKeyOrigin(baseUrl);
  const had = await services.apiKeys.clear(baseUrl);
  services.log.info(had ? `API key cleared for ${origin}` : `no API key was stored for ${origin}`);
  if (!opts.quiet)
    void vscode.window.showInformationMessage(
      had ? `Quarry: API key for ${origin} cleared.` : `Quarry: no API key was stored for ${origin}.`,
    );
  return had;
}

export function registerModelCommands(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.selectModel', () => selectModel(services)),
    // Arguments are for scripted callers (tests, other features): { quiet: true } shows no notification.
    vscode.commands.registerCommand('quarry.testConnection', (opts?: { quiet?: boolean }) =>
      testConnection(services, opts ?? {}),
    ),
    vscode.commands.registerCommand('quarry.setApiKey', (key?: unknown) =>
      setApiKey(services, typeof key === 'string' ? key : undefined),
    ),
    vscode.commands.registerCommand('quarry.clearApiKey', (opts?: { quiet?: boolean }) =>
      clearApiKey(services, opts ?? {}),
    ),
  );
}
