// A tiny transit database where every district has two stops, and a test suite of it: the original plus one variant
// where district 2 has a third stop, so a count that names the wrong district matches on the original database and
// not on the variant. Real SQLite files in a fresh temporary folder.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildDb, tempDir } from './fixtures';

const SCHEMA = `CREATE TABLE district(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE stop(id INTEGER PRIMARY KEY, name TEXT NOT NULL, district_id INTEGER NOT NULL REFERENCES district(id));
INSERT INTO district VALUES (1, 'North'), (2, 'South');
INSERT INTO stop VALUES (1, 'Ash', 1), (2, 'Birch', 1), (3, 'Cedar', 2), (4, 'Dale', 2);`;

/** The gold: stops in district 1. */
export const TRANSIT_GOLD = 'SELECT count(*) FROM stop WHERE district_id = 1';
/** The wrong district: 2 on the original (a false positive), 3 on the variant. */
export const TRANSIT_NEAR_MISS = 'SELECT count(*) FROM stop WHERE district_id = 2';
/** The same meaning written otherwise: right everywhere. */
export const TRANSIT_REWRITE = 'SELECT COUNT(s.id) FROM stop AS s WHERE s.district_id = 1';

interface TransitSuite {
  /** A --db-dir: DIR/transit/transit.sqlite and DIR/lonely/lonely.sqlite (the latter has no folder in the suite). */
  dbDir: string;
  dbPath: string;
  lonelyPath: string;
  /** TSDIR/transit/transit.sqlite (the original) and TSDIR/transit/transit_v1.sqlite (the variant). */
  tsDir: string;
  variantPath: string;
}

export function transitSuite(): TransitSuite {
  const dbDir = tempDir('quarry-transit-');
  const tsDir = tempDir('quarry-transit-ts-');
  for (const d of [join(dbDir, 'transit'), join(dbDir, 'lonely'), join(tsDir, 'transit')]) mkdirSync(d);
  const dbPath = buildDb('transit', { sql: SCHEMA, dir: join(dbDir, 'transit') });
  const lonelyPath = buildDb('lonely', { sql: SCHEMA, dir: join(dbDir, 'lonely') });
  buildDb('transit', { sql: SCHEMA, dir: join(tsDir, 'transit') });
  const variantPath = buildDb('transit', {
    sql: `${SCHEMA}\nINSERT INTO stop VALUES (5, 'Elm', 2);`,
    dir: join(tsDir, 'transit'),
    file: 'transit_v1.sqlite',
  });
  return { dbDir, dbPath, lonelyPath, tsDir, variantPath };
}
