// The command-line form of a dataset: `NAME:FILE`, e.g. `spider:data/dev.json` or `cosql:cosql_dev.json`.
import { DATASET_NAMES, DatasetError, type DatasetName } from './types';

interface DatasetSpec {
  name: DatasetName;
  file: string;
}

export function parseDatasetSpec(text: string): DatasetSpec {
  const colon = text.indexOf(':');
  const name = colon < 0 ? '' : text.slice(0, colon).toLowerCase();
  const file = colon < 0 ? '' : text.slice(colon + 1);
  if (!DATASET_NAMES.includes(name as DatasetName) || file === '') {
    throw new DatasetError(
      `expected NAME:FILE.json with NAME one of ${DATASET_NAMES.join(', ')} (e.g. spider:dev.json), got '${text}'`,
    );
  }
  return { name: name as DatasetName, file };
}
