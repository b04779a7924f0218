// VS Code glue only: everything it shows comes from src/core. Activation creates the shared services and lets each
// feature register its commands and views; it does no heavy work (no SQLite, no onnx: those load on first use).
import * as vscode from 'vscode';
// When the bundle started loading (its first line, set by the build's banner; this module's own start when run
// unbundled): activation time counts from there, module loading included.
const loadedAt = (globalThis as { __quarryLoadStart?: number }).__quarryLoadStart ?? performance.now();
import { createServices, type Services, type ServicesHandle } from './services';
import { registerShowSchema } from './showSchema';
import { registerStatusBar } from './statusBar';
import { registerModelCommands } from './modelCommands';
import { register as registerDatabases, type DatabasesFeature } from './databases/index';
import { register as registerAsk } from './ask/index';
import { register as registerChat } from './chat/index';
import { registerLmTools } from './lmTools/tools';
import { register as registerDiagnostics } from './diagnostics/index';
import { register as registerReplay } from './replay/index';
import { register as registerLabeling } from './labeling/index';
import { register as registerSqlEditor } from './sqlEditor/index';
import { registerCheckEnvironment } from './training/checkEnvironment';
import { registerJobsView, type JobsTree } from './training/jobsView';
import { registerCheckpointCommands } from './training/checkpointCommands';
import { registerRestoreTestHook } from './webviews/kit';
import { registerTrust } from './trust';

type Register = (context: vscode.ExtensionContext, services: Services) => void;

/** Each feature's register(); a feature that throws is logged and the others still load. */
const FEATURES: [name: string, register: Register][] = [
  ['model commands', registerModelCommands],
  [
    'status bar',
    (context, services) => {
      statusBar = registerStatusBar(context, services);
    },
  ],
  ['show schema', registerShowSchema],
  [
    'databases',
    (context, services) => {
      databases = registerDatabases(context, services);
    },
  ],
  ['ask', registerAsk],
  ['chat', registerChat],
  ['language-model tools', registerLmTools],
  ['diagnostics', registerDiagnostics],
  ['replay', registerReplay],
  ['labeling', registerLabeling],
  ['sql editor', registerSqlEditor],
  ['training environment', registerCheckEnvironment],
  [
    'jobs',
    (context, services) => {
      jobs = registerJobsView(context, services);
    },
  ],
  ['checkpoints', registerCheckpointCommands],
  ['panel restore test hook', registerRestoreTestHook],
];

let handle: ServicesHandle | null = null;
let databases: DatabasesFeature | undefined;
let statusBar: vscode.StatusBarItem | undefined;
let jobs: JobsTree | undefined;

/**
 * What activate() returns (ext.exports): the shared services and the Databases view, for tests and other extensions.
 */
export interface QuarryApi {
  services: Services;
  databases: DatabasesFeature | undefined;
  /** The model status bar item. */
  statusBar: vscode.StatusBarItem | undefined;
  /** The Training Jobs view's data (tests read its items). */
  jobs: JobsTree | undefined;
  /** How long activation took, ms: from this bundle starting to load to the end of activate() (bench/editorStartup). */
  activationMs: number;
}

export async function activate(context: vscode.ExtensionContext): Promise<QuarryApi> {
  const services = createServices(context);
  handle = services;
  context.subscriptions.push(vscode.commands.registerCommand('quarry.showLog', () => services.log.show()));
  // Workspace Trust first: the features ask it before anything that could start a process or reach a host.
  registerTrust(context, services.log);
  for (const [name, register] of FEATURES) {
    try {
      register(context, services);
    } catch (err) {
      services.log.showError(`the ${name} feature failed to start`, err);
    }
  }
  const activationMs = performance.now() - loadedAt;
  services.log.info(`activated (${context.extension.packageJSON.version as string}) in ${activationMs.toFixed(0)} ms`);
  return { services, databases, statusBar, jobs, activationMs };
}

export async function deactivate(): Promise<void> {
  const h = handle;
  handle = null;
  await h?.shutdown();
}
