// build_foreign_key_map(_from_json): columns linked by foreign keys map to the lowest-numbered column of their group,
// so a join written from either side of a key compares equal.
import { readFileSync } from 'node:fs';
import type { TablesJsonEntry } from './schema';

export type ForeignKeyMap = ReadonlyMap<string, string>;

export function foreignKeyMap(entry: TablesJsonEntry): ForeignKeyMap {
  const cols = entry.column_names_original.map(([ti, c]) =>
    ti >= 0 ? `__${entry.table_names_original[ti]!.toLowerCase()}.${c.toLowerCase()}__` : '__all__',
  );
  // As the official keyset_in_list: the first group holding either key takes both (groups are never merged).
  const groups: Array<Set<number>> = [];
  for (const [k1, k2] of entry.foreign_keys) {
    let g = groups.find((s) => s.has(k1) || s.has(k2));
    if (!g) {
      g = new Set();
      groups.push(g);
    }
    g.add(k1);
    g.add(k2);
  }
  const map = new Map<string, string>();
  for (const g of groups) {
    const sorted = [...g].sort((a, b) => a - b);
    for (const i of sorted) map.set(cols[i]!, cols[sorted[0]!]!);
  }
  return map;
}

const fkCache = new Map<string, ReadonlyMap<string, ForeignKeyMap>>();

/** db_id -> foreign-key map for every database in a tables.json file, memoized per path. */
export function foreignKeyMaps(tablesJsonPath: string): ReadonlyMap<string, ForeignKeyMap> {
  let maps = fkCache.get(tablesJsonPath);
  if (!maps) {
    const entries = JSON.parse(readFileSync(tablesJsonPath, 'utf8')) as TablesJsonEntry[];
    maps = new Map(entries.map((e) => [e.db_id, foreignKeyMap(e)]));
    fkCache.set(tablesJsonPath, maps);
  }
  return maps;
}
