// The seam between the execution evaluator and the Spider SQL parser (hardness levels, exact-set match), which
// lives in src/core/sql and src/core/eval/exactMatch.ts. Kept behind this interface so execution scoring works
// (and is tested) on its own.
import type { Hardness } from './scores';

export interface SpiderScorer {
  /** Spider's hardness of a gold query, or undefined when it cannot be parsed against the schema. */
  hardness(goldSql: string, dbId: string, dbPath: string): Hardness | undefined;
  /** Spider exact-set match; undefined when the scorer has no exact matcher. */
  exactMatch?: (goldSql: string, predSql: string, dbId: string, dbPath: string) => boolean;
}

/** Used when no parser is wired in: hardness unknown (items count only under "all"), no exact match. */
export const noSpiderScorer: SpiderScorer = { hardness: () => undefined };
