// Builds the SpiderScorer the CLI uses: hardness from the gold query parsed against the database's own schema (as
// evaluation.py does with get_schema(db)), exact-set match with the foreign-key maps of tables.json.
import { loadSpiderSchema, type SpiderSchema } from '../sql/spider/schema';
import { foreignKeyMaps, type ForeignKeyMap } from '../sql/spider/foreignKeys';
import { spiderHardness } from '../sql/hardness';
import { exactSetMatch } from './exactMatch';
import type { SpiderScorer } from './spiderHooks';

interface SpiderScorerOptions {
  /** tables.json; required for exact-set match. */
  tablesPath?: string;
  needExactMatch: boolean;
}

export function spiderScorer(opts: SpiderScorerOptions): SpiderScorer {
  if (opts.needExactMatch && !opts.tablesPath) throw new Error('exact-set match needs --tables tables.json');
  const fkMaps = opts.tablesPath && opts.needExactMatch ? foreignKeyMaps(opts.tablesPath) : undefined;
  const schemaOf = (dbPath: string): SpiderSchema | undefined => {
    try {
      return loadSpiderSchema(dbPath);
    } catch {
      return undefined;
    }
  };
  const noKeys: ForeignKeyMap = new Map();
  return {
    hardness(goldSql, _dbId, dbPath) {
      const schema = schemaOf(dbPath);
      return schema ? (spiderHardness(goldSql, schema).hardness ?? undefined) : undefined;
    },
    exactMatch: fkMaps
      ? (goldSql, predSql, dbId, dbPath) => {
          const schema = schemaOf(dbPath);
          return schema ? exactSetMatch(goldSql, predSql, schema, fkMaps.get(dbId) ?? noKeys).match : false;
        }
      : undefined,
  };
}
