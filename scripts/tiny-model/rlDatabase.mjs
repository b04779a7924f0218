// GRPO's environment for `npm run train:demo --rl-db distinct` (issue 31): the transit database with stops added so
// that no two districts have the same number of stops. On the sample every district has two, so a count that names the
// wrong district returns the gold's 2 and the execution reward pays for it in full; here it returns another number and
// earns nothing. The added stops come after the original ten (the prompt's three example rows are the same) and lie on
// no line. Only the reward's database changes: the held-back questions are still scored on the sample and its suite.
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

/** District -> stops added (Centre keeps its two): 2, 3, 4, 5 and 6 stops. */
const ADDED_STOPS = {
  Northgate: ['Library'],
  Riverside: ['Boat House', 'Riverside Park'],
  Docks: ['Dry Dock', 'Fish Market', 'Lighthouse'],
  Eastfield: ['Retail Park', 'Sports Hall', 'Bus Depot', 'Eastfield Mall'],
};

/** Copies the transit database SRC to DEST with ADDED_STOPS inserted (ids after the largest). */
export function writeDistinctCountsDb(src, dest) {
  const Database = createRequire(import.meta.url)('better-sqlite3');
  rmSync(dest, { force: true });
  copyFileSync(src, dest);
  const db = new Database(dest);
  try {
    const insert = db.prepare('INSERT INTO stop (name, district, accessible) VALUES (?, ?, ?)');
    db.transaction(() => {
      let i = 0;
      for (const [district, names] of Object.entries(ADDED_STOPS))
        for (const name of names) insert.run(name, district, i++ % 2);
    })();
    const counts = db.prepare('SELECT COUNT(*) AS n FROM stop GROUP BY district').all();
    if (new Set(counts.map((c) => c.n)).size !== counts.length) throw new Error(`${dest}: two districts share a count`);
  } finally {
    db.close();
  }
}
