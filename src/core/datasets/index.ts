// Benchmark datasets as agent Tasks: `loadDataset('spider', 'dev.json', 'database/')`.
import { basename, resolve } from 'node:path';
import { HARDNESS_LEVELS } from '../eval/scores';
import { BIRD_LEVELS, loadBird } from './bird';
import { loadConversational } from './conversational';
import { loadSpider } from './spider';
import type { Dataset, DatasetName } from './types';

export * from './types';
export { parseDatasetSpec } from './spec';

/** Which evaluation mode scores a dataset's predictions (the one its official evaluator uses). */
export function evalModeOf(name: DatasetName): 'spider' | 'bird' {
  return name === 'bird' ? 'bird' : 'spider';
}

interface LoadDatasetOptions {
  /**
   * Run what can run: leave out questions whose database is missing (listed in Dataset.skipped) instead of refusing.
   */
  skipMissing?: boolean;
}

export function loadDataset(name: DatasetName, file: string, dbDir: string, o: LoadDatasetOptions = {}): Dataset {
  const abs = resolve(file),
    absDb = resolve(dbDir);
  const skipped = new Map<string, number>();
  const opts = {
    file: abs,
    dbDir: absDb,
    idPrefix: `${name}:${basename(abs).replace(/\.json$/i, '')}`,
    skipMissing: o.skipMissing,
    skipped,
  };
  const base = { name, file: abs, dbDir: absDb };
  const tasks =
    name === 'spider'
      ? loadSpider(opts)
      : name === 'bird'
        ? loadBird(opts)
        : loadConversational(opts, name === 'sparc' ? 'SParC' : 'CoSQL');
  const levels = name === 'bird' ? BIRD_LEVELS : HARDNESS_LEVELS;
  const left = [...skipped].map(([dbId, questions]) => ({ dbId, questions }));
  return { ...base, tasks, levels, ...(left.length ? { skipped: left } : {}) };
}
