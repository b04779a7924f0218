// Checkpoints back into the editor: "Quarry: Load Checkpoint…" (a job's checkpoint from the Jobs view, the job panel
// or a folder; exported to ONNX or served; progress; the parity result shown; optionally made the model the Ask panel
// uses), "Quarry: Unload Checkpoint…", "Quarry: Evaluate Checkpoint…" (quarry bench with progress, the report
// stored with the model) and "Quarry: Compare Checkpoints…" (the compare panel). The work is src/app/checkpoints; the
// registry is .quarry/models.json (src/core/training/modelRegistry.ts).
import * as vscode from 'vscode';
import { fork } from 'node:child_process';
import { dirname, join } from 'node:path';
import type { Services } from '../services';
import { ComparePanel } from '../compare/panel';
import { updateSetting } from '../settingWriter';
import { isTrusted, requireTrust } from '../trust';
import { registryEntryAllowed } from '../trustPolicy';
import {
  describeProvenance,
  ModelRegistry,
  type Evaluation,
  type RegisteredModel,
} from '../../core/training/modelRegistry';
import { parseModelSpec } from '../../core/models/spec';

/** What `quarry.loadCheckpoint` takes from code (tests, the job panel): no question is asked for what is given. */
interface LoadCheckpointArg {
  checkpoint: string;
  jobId?: string;
  name?: string;
  /** Serve with transformers' server instead of exporting to ONNX. */
  serve?: boolean;
  /** Make it the model Quarry uses (the Ask panel, @quarry) once loaded. */
  use?: boolean;
}

interface EvaluateCheckpointArg {
  name: string;
  dataset: string;
  dbDir: string;
  protocol: string;
  samples?: number;
  limit?: number;
}

function workspaceOrSay(services: Services): string | undefined {
  const ws = services.workspaceDir();
  if (!ws) void vscode.window.showErrorMessage('Quarry: open a folder first: loaded models live in its .quarry/.');
  return ws;
}

async function pythonEnv(context: vscode.ExtensionContext, services: Services, ws: string) {
  const { choosePython } = await import('../../core/training/pythonEnv');
  const python = choosePython({ setting: services.settings().python, searchRoots: [ws, context.extensionUri.fsPath] });
  return { python: python.path, repoRoot: context.extensionUri.fsPath };
}

/** Makes a registered model the one Quarry uses: the onnx directory, or the server's URL and model name. */
export async function useRegisteredModel(m: RegisteredModel): Promise<void> {
  const spec = parseModelSpec(m.spec);
  if (spec.kind === 'onnx') await updateSetting('model.onnxPath', spec.dir);
  else {
    await updateSetting('model.baseUrl', spec.baseURL);
    await updateSetting('model.name', spec.model);
  }
  await updateSetting('model.backend', spec.kind);
}

function parityText(m: RegisteredModel): string {
  const p = m.parity;
  if (!p) return 'parity not checked';
  if (p.equal) return `parity ok: ${p.cases} prompts decode the same tokens as transformers (${p.against})`;
  const d = p.firstDivergence;
  return (
    `parity differs on ${p.differing} of ${p.cases} prompts: prompt ${d?.case} at token ${d?.position} ` +
    `(transformers ${d?.expected ?? 'end'}, ${p.against} ${d?.got ?? 'end'})`
  );
}

type CheckpointPick = vscode.QuickPickItem & { path?: string; jobId?: string; browse?: boolean };

/** The loadable checkpoints of one job (the Jobs view item's) or of every job, and a folder picker. */
async function pickCheckpoint(ws: string, jobId?: string): Promise<{ path: string; jobId?: string } | undefined> {
  const { JobStore } = await import('../../app/jobs');
  const { jobCheckpoints } = await import('../../app/jobs/jobFiles');
  const store = new JobStore(ws);
  const jobs = jobId ? [store.get(jobId)] : store.list();
  const items: CheckpointPick[] = [];
  for (const job of jobs) {
    for (const c of jobCheckpoints(job, store.dir(job.id))) {
      items.push({
        label: `${job.name} · step ${c.step}`,
        description: c.loadable ? c.engine : `${c.engine} · needs work`,
        detail: c.loadable ? c.path : (c.note ?? c.path),
        path: c.loadable ? c.path : undefined,
        jobId: job.id,
      });
    }
  }
  items.push({ label: '$(folder-opened) Browse for a checkpoint folder…', browse: true });
  const chosen = await vscode.window.showQuickPick(items, {
    title: 'Quarry: Load Checkpoint',
    placeHolder: 'A Hugging Face checkpoint (config.json and weights)',
    matchOnDetail: true,
  });
  if (!chosen) return undefined;
  if (chosen.browse) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      openLabel: 'Load this checkpoint',
      title: 'Checkpoint folder (config.json and model weights)',
    });
    return picked?.[0] ? { path: picked[0].fsPath } : undefined;
  }
  if (!chosen.path) {
    void vscode.window.showWarningMessage(`Quarry: that checkpoint cannot be loaded as it is: ${chosen.detail}`);
    return undefined;
  }
  return { path: chosen.path, jobId: chosen.jobId };
}

/**
 * Runs `quarry ARGS…` (dist/cli.js beside this bundle) in its own process with a cancellable progress notification:
 * the heavy work (export, servers, benchmarks) stays out of the extension bundle, and a cancel is the CLI's clean
 * Ctrl-C. Each stderr line goes to `onLine`; resolves with stdout, rejects with the last stderr lines.
 */
function runCli(
  context: vscode.ExtensionContext,
  cwd: string,
  args: string[],
  title: string,
  onLine: (line: string, progress: vscode.Progress<{ message?: string; increment?: number }>) => void,
): Thenable<string> {
  const cli = join(context.extensionUri.fsPath, 'dist', 'cli.js');
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) =>
      new Promise<string>((done, fail) => {
        const child = fork(cli, args, { cwd, silent: true, env: { ...process.env, NO_COLOR: '1' } });
        let stdout = '';
        let stderr = '';
        const sub = token.onCancellationRequested(() => child.kill('SIGINT'));
        child.stdout!.on('data', (d: Buffer) => {
          stdout += d.toString();
        });
        child.stderr!.on('data', (d: Buffer) => {
          stderr += d.toString();
          for (const line of d.toString().split(/[\r\n]+/))
            if (line.trim()) onLine(line.trim().replace(/…$/, ''), progress);
        });
        child.on('error', (err) => {
          sub.dispose();
          fail(err);
        });
        child.on('close', (code) => {
          sub.dispose();
          if (code === 0) done(stdout);
          else fail(new Error(stderr.trim().split('\n').slice(-3).join('\n') || `quarry exited with ${code}`));
        });
      }),
  );
}

async function loadCheckpointCommand(
  context: vscode.ExtensionContext,
  services: Services,
  arg: unknown,
): Promise<RegisteredModel | undefined> {
  if (!requireTrust('loadCheckpoint')) return undefined;
  const ws = workspaceOrSay(services);
  if (!ws) return undefined;
  let given: LoadCheckpointArg | undefined;
  if (arg && typeof arg === 'object' && typeof (arg as LoadCheckpointArg).checkpoint === 'string')
    given = arg as LoadCheckpointArg;
  else if (typeof arg === 'string') given = { checkpoint: arg };
  else {
    const fromJob =
      arg && typeof arg === 'object' && 'job' in arg ? (arg as { job: { id: string } }).job.id : undefined;
    const picked = await pickCheckpoint(ws, fromJob);
    if (!picked) return undefined;
    given = { checkpoint: picked.path, jobId: picked.jobId };
  }
  let serve = given.serve;
  if (serve === undefined) {
    const form = await vscode.window.showQuickPick(
      [
        { label: 'Export to ONNX', description: 'runs in the editor, no server', serve: false },
        { label: 'Serve with transformers', description: 'an OpenAI-compatible server on this machine', serve: true },
      ],
      { title: 'Quarry: load the checkpoint as…' },
    );
    if (!form) return undefined;
    serve = form.serve;
  }
  const env = await pythonEnv(context, services, ws);
  // The export (or the server), the parity check and the registry entry are `quarry checkpoints load` (dist/cli.js
  // beside this bundle) in its own process; its stage lines on stderr become the progress messages.
  const args = ['checkpoints', 'load', given.checkpoint, '--python', env.python, '--json'];
  if (given.name) args.push('--as', given.name);
  if (given.jobId) args.push('--job', given.jobId);
  if (serve) args.push('--serve');
  let model: RegisteredModel;
  try {
    const out = await runCli(context, ws, args, 'Quarry: loading checkpoint', (line, progress) => {
      services.log.info(`load checkpoint: ${line}`);
      progress.report({ message: line.length > 90 ? `${line.slice(0, 90)}…` : line });
    });
    model = (JSON.parse(out.trim().split('\n').pop() ?? '{}') as { model: RegisteredModel }).model;
  } catch (err) {
    services.log.showError('cannot load the checkpoint', err);
    return undefined;
  }
  const text = `Quarry: loaded ${model.name} (${model.spec}): ${parityText(model)}`;
  services.log.info(text);
  if (given.use) {
    await useRegisteredModel(model);
    void vscode.window.showInformationMessage(`${text}. Quarry now uses it.`);
  } else {
    void vscode.window.showInformationMessage(text, 'Use It', 'Evaluate…').then(async (choice) => {
      if (choice === 'Use It') await useRegisteredModel(model);
      else if (choice === 'Evaluate…') await vscode.commands.executeCommand('quarry.evaluateCheckpoint', model.name);
    });
  }
  return model;
}

async function pickModel(ws: string, title: string): Promise<RegisteredModel | undefined> {
  const models = new ModelRegistry(ws).list();
  if (models.length === 0) {
    void vscode.window.showInformationMessage('Quarry: no checkpoints loaded yet (Quarry: Load Checkpoint…).');
    return undefined;
  }
  const chosen = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m.name, description: describeProvenance(m), detail: m.spec, m })),
    { title },
  );
  return chosen?.m;
}

/** The workspaceState key of the last evaluation set (dataset, databases, protocol, dialog folder). */
const EVAL_MEMORY_KEY = 'quarry.evaluate.last';

/**
 * What to evaluate on: the answers given by code, else asked once — the last set is offered first, then the
 * workspace's dataset files, then a dialog opening in the folder used last — and remembered for the next model.
 */
async function evaluationSet(
  context: vscode.ExtensionContext,
  ws: string,
  given: Partial<EvaluateCheckpointArg>,
): Promise<{ dataset: string; dbDir: string; protocol: string } | undefined> {
  const e = await import('../../app/train/evalChoices');
  const memory = e.readEvalMemory(context.workspaceState.get(EVAL_MEMORY_KEY));
  let { dataset, dbDir, protocol } = given;
  if (!dataset || !dbDir) {
    const sets = e.evalSetChoices(memory, ws);
    const p =
      dataset || sets.length === 1
        ? { set: null }
        : await vscode.window.showQuickPick(sets, { title: 'Quarry: Evaluate Checkpoint — on which questions?' });
    if (!p) return undefined;
    if (p.set) {
      dataset = p.set.dataset;
      dbDir = p.set.dbDir;
      protocol ??= p.set.protocol;
    }
  }
  if (!dataset) {
    const f = await vscode.window.showOpenDialog({
      canSelectFiles: true,
      filters: { 'Dataset (JSON)': ['json'] },
      title: 'Dataset questions (Spider-format JSON, e.g. dev.json)',
      defaultUri: vscode.Uri.file(e.dialogFolder(memory, ws)),
    });
    if (!f?.[0]) return undefined;
    dataset = `spider:${f[0].fsPath}`;
    memory.folder = dirname(f[0].fsPath);
  }
  if (!dbDir) {
    const d = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      title: 'Databases (DIR/<db_id>/<db_id>.sqlite)',
      defaultUri: vscode.Uri.file(e.dialogFolder(memory, ws)),
    });
    if (!d?.[0]) return undefined;
    dbDir = d[0].fsPath;
    memory.folder = dirname(dbDir);
  }
  if (!protocol) {
    const { PROTOCOL_NAMES } = await import('../../core/agent/protocols');
    protocol = await vscode.window.showQuickPick(e.protocolOrder(PROTOCOL_NAMES, memory.protocol), {
      title: 'Agent protocol',
    });
  }
  if (!protocol) return undefined;
  await context.workspaceState.update(EVAL_MEMORY_KEY, { ...memory, dataset, dbDir, protocol });
  return { dataset, dbDir, protocol };
}

async function evaluateCommand(context: vscode.ExtensionContext, services: Services, arg: unknown) {
  if (!requireTrust('evaluateCheckpoint')) return undefined;
  const ws = workspaceOrSay(services);
  if (!ws) return undefined;
  const given = arg && typeof arg === 'object' ? (arg as Partial<EvaluateCheckpointArg>) : {};
  const name =
    typeof arg === 'string' ? arg : (given.name ?? (await pickModel(ws, 'Quarry: Evaluate Checkpoint'))?.name);
  if (!name) return undefined;
  const chosen = await evaluationSet(context, ws, given);
  if (!chosen) return undefined;
  const { dataset, dbDir, protocol } = chosen;
  // The benchmark runs in the CLI (dist/cli.js beside this bundle, `quarry checkpoints eval`), in its own process:
  // the bench code stays out of the extension bundle, and a cancel is the CLI's clean Ctrl-C (finished questions kept).
  const args = ['checkpoints', 'eval', name, '--dataset', dataset, '--db-dir', dbDir, '--protocol', protocol, '--json'];
  if (given.samples) args.push('--samples', String(given.samples));
  if (given.limit) args.push('--limit', String(given.limit));
  try {
    let last = 0;
    const out = await runCli(context, ws, args, `Quarry: evaluating ${name}`, (line, progress) => {
      const m = /(\d+)\/(\d+)\s+\d+%/.exec(line);
      if (!m) return;
      const pct = (100 * Number(m[1])) / Math.max(1, Number(m[2]));
      progress.report({ increment: pct - last, message: `${m[1]}/${m[2]} episodes` });
      last = pct;
    });
    const { evaluation } = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { evaluation: Evaluation };
    const text = `Quarry: ${name}: greedy EX ${(100 * evaluation.ex.greedy).toFixed(1)}% of ${evaluation.items}`;
    services.log.info(`${text} (${evaluation.report})`);
    void vscode.window.showInformationMessage(text);
    return evaluation;
  } catch (err) {
    services.log.showError(`cannot evaluate ${name}`, err);
    return undefined;
  }
}

async function compareCommand(context: vscode.ExtensionContext, services: Services, arg: unknown) {
  const ws = workspaceOrSay(services);
  if (!ws) return undefined;
  const given = arg && typeof arg === 'object' ? (arg as { names?: string[]; dataset?: string }) : {};
  let names = given.names;
  let dataset = given.dataset;
  if (!names) {
    const models = new ModelRegistry(ws).list().filter((m) => m.evaluations.length > 0);
    const chosen = await vscode.window.showQuickPick(
      models.map((m) => ({ label: m.name, description: describeProvenance(m), m })),
      { title: 'Quarry: Compare Checkpoints (two or more evaluated models)', canPickMany: true },
    );
    if (!chosen || chosen.length < 2) return undefined;
    names = chosen.map((c) => c.label);
    const datasets = [...new Set(chosen.flatMap((c) => c.m.evaluations.map((e) => e.dataset)))];
    dataset = datasets.length === 1 ? datasets[0] : await vscode.window.showQuickPick(datasets, { title: 'Dataset' });
  }
  if (!dataset) return undefined;
  const { ComparePanel } = await import('../compare/panel');
  ComparePanel.show(context, services, ws, names, dataset);
  return { names, dataset };
}

async function unloadCommand(context: vscode.ExtensionContext, services: Services, arg: unknown) {
  if (!requireTrust('unloadCheckpoint')) return undefined;
  const ws = workspaceOrSay(services);
  if (!ws) return undefined;
  const name = typeof arg === 'string' ? arg : (await pickModel(ws, 'Quarry: Unload Checkpoint'))?.name;
  if (!name) return undefined;
  try {
    const out = await runCli(context, ws, ['checkpoints', 'unload', name], `Quarry: unloading ${name}`, () => {});
    services.log.info(out.trim());
    return name;
  } catch (err) {
    services.log.showError(`cannot unload ${name}`, err);
    return undefined;
  }
}

export function registerCheckpointCommands(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.loadCheckpoint', (arg?: unknown) =>
      loadCheckpointCommand(context, services, arg),
    ),
    vscode.commands.registerCommand('quarry.unloadCheckpoint', (arg?: unknown) =>
      unloadCommand(context, services, arg),
    ),
    vscode.commands.registerCommand('quarry.evaluateCheckpoint', (arg?: unknown) =>
      evaluateCommand(context, services, arg),
    ),
    vscode.commands.registerCommand('quarry.compareCheckpoints', (arg?: unknown) =>
      compareCommand(context, services, arg),
    ),
  );
  // After a window reload an open compare panel comes back on the same models and dataset.
  ComparePanel.register(context, services);
}

/**
 * The registry's models as model-picker entries (used by Quarry: Switch Model…); in an untrusted workspace only the
 * ONNX ones (a served entry names a host to reach).
 */
export function registryModels(ws: string | undefined): RegisteredModel[] {
  if (!ws) return [];
  try {
    const trusted = isTrusted();
    return new ModelRegistry(ws).list().filter((m) => registryEntryAllowed(m.spec, trusted));
  } catch {
    return [];
  }
}
