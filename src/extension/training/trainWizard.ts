// "Quarry: Train a Model…": a quick-pick wizard — recipe → base model → data → engine → target → resources → review —
// that writes the launch (app/train/wizard.ts: the same launch `quarry train` writes, or the recipe's SFT stage for
// TRL), shows the saved job.json to open and edit before launch, and submits it through app/jobs; the job panel then
// opens on it. Every step can be answered from code (`quarry.trainModel` with the answers), which skips that step.
// The base model step offers the bundled tiny model and the registered models; the data step makes data where it asks
// (wizardDataStep.ts); the last answers are remembered in workspaceState and offered first the next time.
import { jobStore } from './jobStore';
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import { requireTrust } from '../trust';
import type { WizardChoices, WizardEngine } from '../../app/train/wizard';
import type { SeenGpus } from '../../core/training/gpus';
import {
  baseModelChoices,
  commandLine,
  defaultSteps,
  lastFirst,
  readWizardMemory,
  type Offered,
  type RegisteredBase,
  type WizardMemory,
} from '../../app/train/wizardChoices';
import { chooseData } from './wizardDataStep';

/** Answers given by code; a step whose answer is given is not asked. `review` answers the last step. */
type TrainAnswers = Partial<WizardChoices> & { review?: 'submit' | 'cancel' };

type Item<T> = vscode.QuickPickItem & { value?: T; action?: 'browse' | 'type' | 'show' };

/** The workspaceState key of the last answers. */
const WIZARD_MEMORY_KEY = 'quarry.trainWizard.last';

/** The recipe the bundled tiny model speaks (media/models/tiny-sql/training.json: skyrl prompts), offered first. */
const FIRST_RECIPE = 'skyrl-sql';

const asItems = <T>(offered: Offered<T>[]): Item<T>[] => offered.map((o) => ({ ...o }));

/** The models registered with `quarry checkpoints load` whose checkpoint folder is on this machine. */
async function registeredBases(ws: string, services: Services): Promise<RegisteredBase[]> {
  const { ModelRegistry } = await import('../../core/training/modelRegistry');
  try {
    return new ModelRegistry(ws)
      .list()
      .map((m) => ({ name: m.name, checkpoint: m.provenance.checkpoint }))
      .filter((m) => existsSync(m.checkpoint));
  } catch (err) {
    services.log.warn(`train wizard: the model registry cannot be read: ${(err as Error).message}`);
    return [];
  }
}

async function pick<T>(title: string, step: number, items: Item<T>[], placeHolder?: string): Promise<Item<T> | null> {
  const chosen = await vscode.window.showQuickPick(items, {
    title: `Quarry: Train a Model (${step}/7) — ${title}`,
    placeHolder,
    ignoreFocusOut: true,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return chosen ?? null;
}

async function browse(title: string, folders: boolean, files: boolean, from?: string): Promise<string | null> {
  const got = await vscode.window.showOpenDialog({
    title,
    canSelectFiles: files,
    canSelectFolders: folders,
    canSelectMany: false,
    defaultUri: from ? vscode.Uri.file(from) : vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return got?.[0]?.fsPath ?? null;
}

const ENGINE_INFO: Record<WizardEngine, string> = {
  trl: "the recipe's SFT stage with TRL (quarry_trainer.train.sft), on one machine",
  verl: "the recipe's RL with verl (launch.sh: verl.trainer.main_ppo beside quarry serve-env)",
  skyrl: "the recipe's RL with SkyRL (launch.sh: quarry_trainer.skyrl.main beside quarry serve-env)",
};

/** The GPUs a job on this machine would see (torch in the job's Python, else nvidia-smi), with progress. */
async function localGpus(python: string, services: Services): Promise<SeenGpus> {
  const { probeGpus } = await import('../../core/training/gpus');
  const seen = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "Quarry: looking for this machine's GPUs…" },
    () => probeGpus(python),
  );
  services.log.info(`train wizard: local: ${seen.how}`);
  return seen;
}

/** Runs the wizard; resolves to the submitted job's id, or undefined when the user stopped. */
async function trainModel(
  context: vscode.ExtensionContext,
  services: Services,
  given: TrainAnswers = {},
): Promise<string | undefined> {
  if (!requireTrust('train')) return undefined;
  const ws = services.workspaceDir();
  if (!ws) {
    void vscode.window.showErrorMessage('Quarry: open a folder first — jobs and launches live in its .quarry/.');
    return undefined;
  }
  const w = await import('../../app/train/wizard');
  const { readRecipe } = await import('../../app/train/recipes');
  const last: WizardMemory = readWizardMemory(context.workspaceState.get(WIZARD_MEMORY_KEY));
  // 1. Recipe
  let recipeName = given.recipe;
  if (!recipeName) {
    const recipes = w.builtinRecipeChoices().map((r) => ({
      label: r.name,
      description: r.name === FIRST_RECIPE ? `${r.title} · the bundled tiny model's prompts` : r.title,
      value: r.name,
    }));
    recipes.sort((a, b) => Number(b.value === FIRST_RECIPE) - Number(a.value === FIRST_RECIPE));
    const items: Item<string>[] = asItems(lastFirst(recipes, last.recipe));
    items.push({ label: '$(file) Recipe file…', description: 'a recipe YAML of your own', action: 'browse' });
    const p = await pick('recipe', 1, items, "A paper's recipe (trainer/recipes)");
    if (!p) return undefined;
    recipeName = p.action === 'browse' ? ((await browse('Recipe file', false, true)) ?? undefined) : p.value;
    if (!recipeName) return undefined;
  }
  const recipe = readRecipe(recipeName, ws);
  const defaults = w.recipeDefaults(recipe);
  // 2. Base model
  let model = given.model;
  if (!model) {
    const bundled = join(context.extensionUri.fsPath, 'media', 'models', 'tiny-sql');
    const items: Item<string>[] = asItems(
      baseModelChoices({
        bundled: existsSync(join(bundled, 'config.json')) ? bundled : null,
        recipeModel: defaults.model,
        registered: await registeredBases(ws, services),
        last: last.model,
      }),
    );
    items.push(
      { label: '$(folder) Local model folder…', description: 'a Hugging Face model folder', action: 'browse' },
      { label: '$(edit) Another model id…', description: 'a Hugging Face hub id', action: 'type' },
    );
    const p = await pick('base model', 2, items);
    if (!p) return undefined;
    model =
      p.action === 'browse'
        ? ((await browse('Base model folder', true, false)) ?? undefined)
        : p.action === 'type'
          ? await vscode.window.showInputBox({ title: 'Base model (hub id)', ignoreFocusOut: true })
          : p.value;
    if (!model) return undefined;
  }
  // 3. Data: a folder `quarry data` wrote, or made here (from a dataset or the saved trajectories).
  let data = given.data;
  let dataKind: string | null = null;
  if (!data) {
    const chosen = await chooseData({ ws, recipe, last: last.data, services, browse, pick });
    if (!chosen) return undefined;
    ({ dir: data, kind: dataKind } = chosen);
  }
  // 4. Engine
  let engine = given.engine;
  if (!engine) {
    const preferred: WizardEngine = dataKind === 'sft' ? 'trl' : 'verl';
    const order = [preferred, ...w.WIZARD_ENGINES.filter((e) => e !== preferred)];
    const offered = order.map((e) => ({ label: e, description: ENGINE_INFO[e], value: e }));
    const p = await pick('engine', 4, asItems(lastFirst(offered, last.engine as WizardEngine | undefined)));
    if (!p?.value) return undefined;
    engine = p.value;
  }
  // 5. Target
  let target = given.target;
  if (!target) {
    const { names, problem } = w.targetNames(ws);
    if (problem) void vscode.window.showWarningMessage(`Quarry: ${problem}`);
    const offered = names.map((n) => ({
      label: n,
      description: n === 'local' ? 'this machine' : '.quarry/targets.json',
      value: n,
    }));
    const p = await pick('target', 5, asItems(lastFirst(offered, last.target)));
    if (!p?.value) return undefined;
    target = p.value;
  }
  // 6. Resources, starting from what the target has: this machine's GPUs as the job's Python sees them (torch, as
  // Check Training Environment reports), or none: then the CPU. Another target's are not known here.
  const { choosePython } = await import('../../core/training/pythonEnv');
  const python = choosePython({ setting: services.settings().python, searchRoots: [ws, context.extensionUri.fsPath] });
  const seen = target === 'local' ? await localGpus(python.path, services) : null;
  let gpus = given.gpus;
  let nodes = given.nodes;
  let maxSteps = given.maxSteps;
  if (gpus === undefined) {
    const { resourceOptions, hardwareProblems } = await import('../../app/train/resources');
    const options = resourceOptions(engine, defaults.gpus, seen, target);
    if (options.length === 0) {
      const why = hardwareProblems({ engine, target, gpus: 1 }, seen).join('; ');
      services.log.warn(`train wizard: ${why}`);
      void vscode.window.showErrorMessage(`Quarry: ${why}.`);
      return undefined;
    }
    const offered = options.map((o) => ({ label: o.label, description: o.description, value: o.gpus }));
    const items: Item<number>[] = asItems(lastFirst(offered, last.gpus));
    const p = await pick('resources', 6, items, seen ? `${target}: ${seen.how}` : undefined);
    if (p?.value === undefined) return undefined;
    gpus = p.value;
  }
  if (nodes === undefined) {
    if (engine === 'trl') nodes = 1;
    else {
      const text = await vscode.window.showInputBox({
        title: 'Quarry: Train a Model (6/7) — nodes',
        value: String(defaults.nodes ?? 1),
        ignoreFocusOut: true,
        validateInput: (v) => (/^[1-9]\d*$/.test(v.trim()) ? null : 'a whole number of nodes, 1 or more'),
      });
      if (!text) return undefined;
      nodes = Number(text.trim());
    }
  }
  if (maxSteps === undefined) {
    if (engine !== 'trl') maxSteps = null;
    else {
      const text = await vscode.window.showInputBox({
        title: 'Quarry: Train a Model (6/7) — steps',
        prompt: "Stop after this many steps (empty: the recipe's epochs; on the CPU a few steps are a try)",
        value: String(defaultSteps(gpus, last.maxSteps) ?? ''),
        ignoreFocusOut: true,
        validateInput: (v) => (v.trim() === '' || /^[1-9]\d*$/.test(v.trim()) ? null : 'a whole number, or empty'),
      });
      if (text === undefined) return undefined;
      maxSteps = text.trim() === '' ? null : Number(text.trim());
    }
  }
  const choices: WizardChoices = { recipe: recipeName, model, data, engine, target, gpus, nodes, maxSteps };
  if (given.out) choices.out = given.out;
  // 7. Review: the launch is written; job.json can be opened and edited before it is submitted.
  const prepared = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Quarry: preparing the ${engine} launch…` },
    () =>
      w.prepareJob(choices, {
        workspace: ws,
        python: python.path,
        repoRoot: context.extensionUri.fsPath,
        gpus: seen,
      }),
  );
  if (prepared.errors.length > 0) {
    services.log.warn(`train wizard: the pre-flight stopped the launch:\n  ${prepared.errors.join('\n  ')}`);
    void vscode.window.showErrorMessage(
      `Quarry: the pre-flight found ${prepared.errors.length} error(s): ${prepared.errors.join('; ').slice(0, 600)}`,
      { modal: false },
    );
    return undefined;
  }
  // The whole command line is an item of its own (its detail), and opens as a document to read or copy.
  const line = commandLine(prepared.spec.command);
  let decision = given.review;
  while (!decision) {
    const p = await pick<'submit' | 'open' | 'show' | 'cancel'>(
      'review',
      7,
      [
        { label: '$(rocket) Submit', description: `${prepared.spec.name ?? ''} on ${target}`, value: 'submit' },
        { label: '$(terminal) Command line', description: 'open it to read or copy', detail: line, value: 'show' },
        { label: '$(edit) Open job.json', description: 'edit any choice, save, then Submit', value: 'open' },
        { label: '$(close) Cancel', description: 'the launch stays written; nothing runs', value: 'cancel' },
      ],
      `Submit ${prepared.spec.name ?? 'the job'} on ${target}?`,
    );
    if (!p?.value || p.value === 'cancel') return undefined;
    if (p.value === 'open') {
      await vscode.window.showTextDocument(vscode.Uri.file(prepared.specFile), { preview: false });
      continue;
    }
    if (p.value === 'show') {
      const doc = await vscode.workspace.openTextDocument({ content: `${line}\n`, language: 'shellscript' });
      await vscode.window.showTextDocument(doc, { preview: true });
      continue;
    }
    decision = p.value;
  }
  if (decision !== 'submit') return undefined;
  // An edited job.json open in the editor is saved first: the file is what runs.
  const open = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === prepared.specFile);
  if (open?.isDirty) await open.save();
  if (!existsSync(prepared.specFile)) throw new Error(`${prepared.specFile} is gone`);
  const read = w.readSpec(prepared.specFile);
  if ('problem' in read) {
    void vscode.window.showErrorMessage(`Quarry: ${read.problem}`);
    return undefined;
  }
  // The file as edited is what runs: checked against this machine's GPUs again before it starts.
  const { specHardwareProblems } = await import('../../app/train/resources');
  const hardware = specHardwareProblems(read.spec, read.spec.target === 'local' ? seen : null);
  if (hardware.length > 0) {
    services.log.warn(`train wizard: not submitted: ${hardware.join('; ')}`);
    void vscode.window.showErrorMessage(`Quarry: not submitted: ${hardware.join('; ')}.`);
    return undefined;
  }
  const remembered: WizardMemory = { recipe: recipeName, model, data, engine, target, gpus, maxSteps };
  await context.workspaceState.update(WIZARD_MEMORY_KEY, remembered);
  const { submitJob } = await import('../../app/jobs');
  let job: Awaited<ReturnType<typeof submitJob>>;
  try {
    job = await submitJob(jobStore(ws), read.spec);
  } catch (err) {
    void vscode.window.showErrorMessage(`Quarry: the job did not start: ${(err as Error).message}`);
    return undefined;
  }
  services.log.info(`train wizard: submitted job ${job.id} (${job.name}) on ${job.target}`);
  await vscode.commands.executeCommand('quarry.refreshJobs');
  await vscode.commands.executeCommand('quarry.openJobPanel', job.id);
  return job.id;
}

export function registerTrainWizard(context: vscode.ExtensionContext, services: Services): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.trainModel', (answers?: unknown) =>
      trainModel(context, services, answers && typeof answers === 'object' ? (answers as TrainAnswers) : {}),
    ),
  );
}
