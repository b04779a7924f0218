// The two exact-match scores a benchmark reports for each question's greedy prediction, next to EX: Spider's
// exact-set match (the official evaluator's, with the foreign-key maps of the dataset's tables.json when it is beside
// the dataset file; Spider, SParC and CoSQL only) and MTSQL-R1's string EM (§4: EM "using the same definitions as in
// our reward design", R_EM = I(ŷ == y), character for character: §3.3.2 "strict string-level").
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { exactSetMatch } from '../eval/exactMatch';
import { loadSpiderSchema, type SpiderSchema } from '../sql/spider/schema';
import { foreignKeyMaps, type ForeignKeyMap } from '../sql/spider/foreignKeys';
import { stringExactMatch } from '../rewards/terms/mtsqlr1';

export interface ExactMatches {
  /** Spider's exact-set match; null for datasets it does not apply to (BIRD). */
  exactSet: boolean | null;
  /** MTSQL-R1's string EM. */
  string: boolean;
}

export interface ExactMatcher {
  match(goldSql: string, predSql: string | null, dbId: string, dbPath: string): ExactMatches;
}

/** A matcher for a dataset file; exact-set match only for the Spider family. */
export function exactMatcher(datasetName: string, datasetFile: string): ExactMatcher {
  const spiderFamily = datasetName === 'spider' || datasetName === 'sparc' || datasetName === 'cosql';
  const tables = join(dirname(datasetFile), 'tables.json');
  let fk: ReadonlyMap<string, ForeignKeyMap> | undefined;
  if (spiderFamily && existsSync(tables)) {
    try {
      fk = foreignKeyMaps(tables);
    } catch {
      fk = undefined;
    }
  }
  const schemas = new Map<string, SpiderSchema | null>();
  const schemaOf = (dbPath: string): SpiderSchema | null => {
    if (!schemas.has(dbPath)) {
      let s: SpiderSchema | null = null;
      try {
        s = loadSpiderSchema(dbPath);
      } catch {
        s = null;
      }
      schemas.set(dbPath, s);
    }
    return schemas.get(dbPath)!;
  };
  const noKeys: ForeignKeyMap = new Map();
  return {
    match(goldSql, predSql, dbId, dbPath) {
      const pred = predSql ?? '';
      const string = predSql !== null && stringExactMatch(pred, goldSql);
      if (!spiderFamily) return { exactSet: null, string };
      const schema = schemaOf(dbPath);
      const exactSet =
        schema !== null && predSql !== null && exactSetMatch(goldSql, pred, schema, fk?.get(dbId) ?? noKeys).match;
      return { exactSet, string };
    },
  };
}
