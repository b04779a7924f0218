// Builds the fixture databases of test/fixtures/datasets/ into DIR/<db_id>/<db_id>.sqlite, as Spider and BIRD lay them
// out.
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

/** The questions of spider-dev.json, by what they ask. */
export const SPIDER_DEV_QUESTIONS = {
  owners: 'How many owners are there?',
  dogs: 'List the names of dogs.',
  math: 'Which students take Math, ordered by name?',
  older: 'Names of owners older than the average age.',
};

/** spider-dev.json's gold for the Math question, as one line. */
export const SPIDER_DEV_MATH_SQL =
  'SELECT T1.name FROM student AS T1 JOIN enrolled AS T2 ON T1.student_id = T2.student_id ' +
  "JOIN course AS T3 ON T2.course_id = T3.course_id WHERE T3.title = 'Math' ORDER BY T1.name";
