// Progress-SQL §4.2, the alignment score and the progressive alignment reward:
//   F(y, y*) = ½(F_struct + F_lex);  Δ = F(y^(K), y*) − F(y^(1), y*);  R_align = ω⁺·Δ if Δ > 0, else ω⁻.
// Gold trees and gold bigrams are built once per (database, gold) through the scoring resources' memo.
import { buildOdt, compareOdt, type OdtBuild, type OdtComparison } from '../odt';
import { bigramsOf, dbSchema } from '../analysis';
import type { ScoringResources } from '../types';

/** Table 4: ω⁺_align = 1.0, ω⁻_align = −0.25. */
export const ALIGN_DEFAULTS = Object.freeze({ positive: 1.0, negative: -0.25 });

export function alignReward(
  delta: number,
  positive: number = ALIGN_DEFAULTS.positive,
  negative: number = ALIGN_DEFAULTS.negative,
): number {
  return delta > 0 ? positive * delta : negative;
}

/** The gold's ODT for this database (schema-resolved), built once per run. */
function goldTreeOf(res: ScoringResources, dbPath: string, goldSql: string): OdtBuild {
  return res.memo('odt', dbPath + '\0' + goldSql, () => buildOdt(goldSql, { schema: dbSchema(res, dbPath) }));
}

/** The ODT comparison of one predicted SQL (null or blank: nothing to compare, F = 0) with the gold. */
export function alignmentOf(
  res: ScoringResources,
  dbPath: string,
  goldSql: string,
  predSql: string | null,
): OdtComparison | null {
  if (predSql === null || predSql.trim() === '') return null;
  return res.memo('odtCompare', dbPath + '\0' + goldSql + '\0' + predSql, () =>
    compareOdt(predSql, goldSql, {
      schema: dbSchema(res, dbPath),
      goldTree: goldTreeOf(res, dbPath, goldSql),
      goldBigrams: bigramsOf(res, goldSql),
    }),
  );
}
