// Builds the fixture databases of test/fixtures/datasets/ into DIR/<db_id>/<db_id>.sqlite, as Spider and BIRD lay them out.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildDb, fixturesDir, tempDir } from '../../helpers/fixtures';

export const datasetFixtures = join(fixturesDir, 'datasets');

export function buildDatasetDbs(dir = tempDir('quarry-datasets-')): string {
  for (const id of ['pets', 'school']) {
    mkdirSync(join(dir, id), { recursive: true });
    buildDb(`datasets/${id}`, { dir: join(dir, id), file: `${id}.sqlite` });
  }
  return dir;
}
