// A synthetic Spider-format corpus for `quarry data rl` at scale: N generated questions over the one small fixture
// database (test/fixtures/datasets/pets.sql), each with its own gold SQL, plus optional questions over databases that
// are not there. Written as Spider lays it out (DIR/database/<db_id>/<db_id>.sqlite, DIR/train_synthetic.json), for
// the data tests and bench/dataRl.bench.ts.
import { createWriteStream, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { buildDb } from './fixtures';

interface RlCorpus {
  /** The question file (Spider format). */
  file: string;
  /** The database directory (`<dbDir>/pets/pets.sqlite`). */
  dbDir: string;
  /** Questions over pets (every `failEvery`-th has a gold that fails: no such table). */
  questions: number;
  /** Of those, how many golds fail. */
  failing: number;
}

/** The i-th generated gold: distinct for every i (so each is run once), all but every `failEvery`-th valid. */
function syntheticGold(i: number, failEvery = 500): string {
  if (i % failEvery === failEvery - 1) return `SELECT count(*) FROM vet WHERE vet_id > ${i}`;
  switch (i % 4) {
    case 0:
      return `SELECT count(*) FROM pet WHERE pet_id <= ${i}`;
    case 1:
      return `SELECT name FROM owner WHERE age > ${i % 60} ORDER BY name LIMIT ${1 + (i % 7)}`;
    case 2:
      return `SELECT T1.name FROM owner AS T1 JOIN pet AS T2 ON T1.owner_id = T2.owner_id WHERE T2.weight < ${i}`;
    default:
      return `SELECT kind, count(*) FROM pet WHERE pet_id <> ${i} GROUP BY kind`;
  }
}

/**
 * Writes the corpus into `dir`: `questions` over pets, then `missing` questions spread over the databases named in
 * `missingDbs` (none of which is built), in turn. The question file is streamed, so it never is one string.
 */
export async function writeRlCorpus(
  dir: string,
  questions: number,
  o: { missingDbs?: string[]; missing?: number; failEvery?: number } = {},
): Promise<RlCorpus> {
  const dbDir = join(dir, 'database');
  mkdirSync(join(dbDir, 'pets'), { recursive: true });
  buildDb('datasets/pets', { dir: join(dbDir, 'pets'), file: 'pets.sqlite' });
  const file = join(dir, 'train_synthetic.json');
  const out = createWriteStream(file);
  const put = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain');
  };
  const missingDbs = o.missingDbs ?? [];
  const missing = missingDbs.length ? (o.missing ?? missingDbs.length) : 0;
  const total = questions + missing;
  await put('[\n');
  let failing = 0;
  for (let i = 0; i < total; i++) {
    const gone = i >= questions;
    const failEvery = o.failEvery ?? 500;
    const gold = gone ? 'SELECT 1' : syntheticGold(i, failEvery);
    if (!gone && i % failEvery === failEvery - 1) failing++;
    const item = {
      db_id: gone ? missingDbs[(i - questions) % missingDbs.length] : 'pets',
      question: `Synthetic question ${i}: what does this return?`,
      query: gold,
    };
    await put(`${JSON.stringify(item)}${i + 1 < total ? ',' : ''}\n`);
  }
  await put(']\n');
  out.end();
  await once(out, 'finish');
  return { file, dbDir, questions, failing };
}
