// The train wizard's data step: a folder `quarry data` wrote (found in the workspace, and under .quarry/data where
// the wizard puts what it makes), or data made right here through app/train/wizardData.ts — SFT conversations from a
// dataset's gold SQL, RL rows from a dataset (`quarry data rl`), SFT from the saved, labeled trajectories (`quarry
// data sft`) — with a notification's progress, the made folder then offered first. Nothing runs in a shell.
import * as vscode from 'vscode';
import { dirname } from 'node:path';
import type { Services } from '../services';
import type { Recipe } from '../../core/training/recipe';
import { lastFirst, type Offered } from '../../app/train/wizardChoices';

type Make = { how: 'gold' | 'rl'; file: string; dbDir: string } | { how: 'trajectories' };
type DataValue = { kind: string; dir: string } | { make: Make } | { browse: 'folder' | 'dataset' };

type Item = vscode.QuickPickItem & { value?: DataValue };
type Pick = (title: string, step: number, items: Item[], placeHolder?: string) => Promise<Item | null>;
type Browse = (title: string, folders: boolean, files: boolean, from?: string) => Promise<string | null>;

const KIND_WORDS: Record<string, string> = { rl: 'RL prompts (verl, SkyRL, TRL GRPO)', sft: 'SFT conversations (TRL)' };

/** What the data step offers: made-here options first when the workspace has no data folder yet. */
async function dataItems(ws: string, recipe: Recipe, lastData: string | undefined): Promise<Item[]> {
  const w = await import('../../app/train/wizard');
  const d = await import('../../app/train/wizardData');
  const found: Offered<DataValue>[] = w.findDataFolders(ws).map((f) => ({
    label: f.label,
    description: KIND_WORDS[f.kind] ?? '',
    detail: f.dir,
    value: { kind: f.kind, dir: f.dir },
  }));
  // lastFirst compares values by identity: the remembered folder's own value object.
  const lastValue = found.find((f) => 'dir' in f.value && f.value.dir === lastData)?.value;
  const make: Item[] = [];
  for (const ds of d.findDatasetFiles(ws)) {
    make.push(
      {
        label: `$(sparkle) Make SFT data from ${ds.label}`,
        description: `each question's ${recipe.protocol} prompt, answered with its gold SQL`,
        detail: `${ds.file} · databases in ${ds.dbDir}`,
        value: { make: { how: 'gold', file: ds.file, dbDir: ds.dbDir } },
      },
      {
        label: `$(sparkle) Make RL data from ${ds.label}`,
        description: `quarry data rl --protocol ${recipe.protocol}`,
        detail: `${ds.file} · databases in ${ds.dbDir}`,
        value: { make: { how: 'rl', file: ds.file, dbDir: ds.dbDir } },
      },
    );
  }
  const saved = d.labeledTrajectories(ws);
  if (saved.files.length > 0)
    make.push({
      label: '$(sparkle) Make SFT data from the saved trajectories',
      description: `quarry data sft: ${saved.files.length} file(s)${saved.labels ? ', their labels win' : ''}`,
      detail: saved.files.join(', '),
      value: { make: { how: 'trajectories' } },
    });
  make.push({
    label: '$(sparkle) Make data from a dataset file…',
    description: 'a Spider-style JSON file (db_id, question, query) with its databases',
    value: { browse: 'dataset' },
  });
  const browse: Item = {
    label: '$(folder-opened) Browse…',
    description: 'a `quarry data` folder, or a labels export (quarry.sft/1 JSONL)',
    value: { browse: 'folder' },
  };
  const folders = lastFirst(found, lastValue).map((o) => ({ ...o }) as Item);
  return found.length > 0 ? [...folders, ...make, browse] : [...make, browse];
}

/** Makes the data the user chose, with progress; the made folder and its kind, or null (said why). */
async function makeData(ws: string, recipe: Recipe, make: Make, services: Services) {
  const d = await import('../../app/train/wizardData');
  const protocol = recipe.protocol;
  const title =
    make.how === 'trajectories'
      ? 'Quarry: making SFT data from the saved trajectories…'
      : `Quarry: making ${make.how === 'gold' ? 'SFT' : 'RL'} data from ${make.file}…`;
  try {
    const made = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () => {
      if (make.how === 'trajectories') {
        const saved = d.labeledTrajectories(ws);
        return d.sftFromTrajectories({ ...saved, outDir: d.newDataDir(ws, 'sft', 'trajectories') });
      }
      const o = { file: make.file, dbDir: make.dbDir, protocol };
      return make.how === 'gold'
        ? d.sftFromDatasetGold({ ...o, outDir: d.newDataDir(ws, 'sft', make.file) })
        : d.rlFromDataset({ ...o, outDir: d.newDataDir(ws, 'rl', make.file) });
    });
    for (const warning of made.warnings) services.log.warn(`train wizard: data: ${warning}`);
    services.log.info(`train wizard: made ${d.madeLabel(made)} in ${made.dir}`);
    if (made.rows === 0) {
      void vscode.window.showErrorMessage(`Quarry: no rows were made (${made.dir}/data.json says why).`);
      return null;
    }
    return { dir: made.dir, kind: made.kind as string };
  } catch (err) {
    services.log.error('train wizard: making the data failed', err);
    void vscode.window.showErrorMessage(`Quarry: the data could not be made: ${(err as Error).message}`);
    return null;
  }
}

/** The data step: a folder (and its kind when known), or null when the user stopped. */
export async function chooseData(o: {
  ws: string;
  recipe: Recipe;
  last: string | undefined;
  services: Services;
  browse: Browse;
  pick: Pick;
}): Promise<{ dir: string; kind: string | null } | null> {
  const items = await dataItems(o.ws, o.recipe, o.last);
  const hasFolders = items.some((i) => i.value && 'dir' in i.value);
  const p = await o.pick('data', 3, items, hasFolders ? undefined : 'No training data yet: make it here');
  const v = p?.value;
  if (!v) return null;
  if ('dir' in v) return v;
  if ('make' in v) return makeData(o.ws, o.recipe, v.make, o.services);
  if (v.browse === 'folder') {
    const dir = await o.browse('Training data', true, true, o.last ? dirname(o.last) : o.ws);
    return dir ? { dir, kind: null } : null;
  }
  const file = await o.browse('Dataset file (Spider-style JSON)', false, true, o.ws);
  if (!file) return null;
  const d = await import('../../app/train/wizardData');
  const { readFileSync } = await import('node:fs');
  let ids: string[] = [];
  try {
    ids = (JSON.parse(readFileSync(file, 'utf8')) as Array<{ db_id?: unknown }>).map((q) => String(q.db_id));
  } catch (err) {
    void vscode.window.showErrorMessage(`Quarry: ${file} is not a dataset file: ${(err as Error).message}`);
    return null;
  }
  const dbDir =
    d.datasetDbDir(file, ids) ?? (await o.browse('The databases folder (<db_id>/<db_id>.sqlite)', true, false, file));
  if (!dbDir) return null;
  const kind = await o.pick('data', 3, [
    {
      label: 'SFT conversations',
      description: 'each prompt answered with its gold SQL',
      value: { kind: 'sft', dir: '' },
    },
    { label: 'RL rows', description: 'quarry data rl', value: { kind: 'rl', dir: '' } },
  ]);
  if (!kind?.value || !('kind' in kind.value)) return null;
  const how = kind.value.kind === 'sft' ? 'gold' : 'rl';
  return makeData(o.ws, o.recipe, { how, file, dbDir }, o.services);
}
