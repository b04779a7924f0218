// Benchmark datasets as agent Tasks: `loadDataset('spider', 'dev.json', 'database/')`.
import { basename, resolve } from 'node:path';
import { HARDNESS_LEVELS } from '../eval/scores';
import { BIRD_LEVELS, loadBird } from './bird';
import { loadConversational } from './conversational';
import { loadSpider } from './spider';
import type { Dataset, DatasetName } from './types';

export * from './types';
export { parseDatasetSpec, type DatasetSpec } from './spec';
export { BIRD_LEVELS } from './bird';

/** Which evaluation mode scores a dataset's predictions (the one its official evaluator uses). */
export function evalModeOf(name: DatasetName): 'spider' | 'bird' {
  return name === 'bird' ? 'bird' : 'spider';
}

export function loadDataset(name: DatasetName, file: string, dbDir: string): Dataset {
  const abs = resolve(file),
    absDb = resolve(dbDir);
  const opts = { file: abs, dbDir: absDb, idPrefix: `${name}:${basename(abs).replace(/\.json$/i, '')}` };
  switch (name) {
    case 'spider':
      return { name, file: abs, dbDir: absDb, tasks: loadSpider(opts), levels: HARDNESS_LEVELS };
    case 'bird':
      return { name, file: abs, dbDir: absDb, tasks: loadBird(opts), levels: BIRD_LEVELS };
    case 'sparc':
      return { name, file: abs, dbDir: absDb, tasks: loadConversational(opts, 'SParC'), levels: HARDNESS_LEVELS };
    case 'cosql':
      return { name, file: abs, dbDir: absDb, tasks: loadConversational(opts, 'CoSQL'), levels: HARDNESS_LEVELS };
  }
}
