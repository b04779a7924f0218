// One ODT comparison (§4.2): F_struct from the trees, F_lex the bigram Jaccard (src/core/sql/bigrams, the same as
// SQL-Trail's r_bigram), F = ½(F_struct + F_lex), the diagnostic tags and their feedback text.
// When either query fails to build a tree, F_struct is 0 (App. D: "the structural similarity is set to zero, and the
// reward relies on lexical alignment") and the feedback is the generic fallback.
import { jaccard, sqlBigrams } from '../../sql/bigrams';
import { normalizeSql } from '../../sql/normalize';
import { buildOdt, type BuildOptions } from './build';
import { structuralSimilarity } from './similarity';
import { diagnose, type TagReason } from './tags';
import { FALLBACK_FEEDBACK, verbalizeTags } from './verbalize';
import type { NodeMatch, OdtBuild, OdtTag } from './types';

interface CompareOptions extends BuildOptions {
  /** The gold's tree when already built (gold trees are cached by callers); else built here. */
  goldTree?: OdtBuild;
  /** The gold's bigram set when already computed. */
  goldBigrams?: ReadonlySet<string>;
}

export interface OdtComparison {
  pred: OdtBuild;
  gold: OdtBuild;
  /** F_struct = s_root; 0 when either tree could not be built. */
  struct: number;
  /** F_lex: Jaccard of SQL bigrams. */
  lexical: number;
  /** F = ½(F_struct + F_lex). */
  F: number;
  /** The root match (null when a tree is missing). */
  match: NodeMatch | null;
  tags: OdtTag[];
  reasons: TagReason[];
  /** App. F text: tags verbalised, the fallback when a tree is missing, null when nothing is tagged. */
  feedback: string | null;
}

export function compareOdt(predSql: string, goldSql: string, options: CompareOptions = {}): OdtComparison {
  const gold = options.goldTree ?? buildOdt(goldSql, options);
  // Same normalised tokens (whitespace, keyword and identifier case aside) means the same tree: skip the parse.
  const pred = gold.ok && normalizeSql(predSql) === normalizeSql(goldSql) ? gold : buildOdt(predSql, options);
  const lexical = jaccard(sqlBigrams(predSql), options.goldBigrams ?? sqlBigrams(goldSql));
  if (!pred.ok || !gold.ok) {
    return {
      pred,
      gold,
      struct: 0,
      lexical,
      F: lexical / 2,
      match: null,
      tags: [],
      reasons: [],
      feedback: FALLBACK_FEEDBACK,
    };
  }
  const match = structuralSimilarity(pred.root, gold.root);
  const { tags, reasons } = diagnose(match);
  const struct = match.score;
  return {
    pred,
    gold,
    struct,
    lexical,
    F: (struct + lexical) / 2,
    match,
    tags,
    reasons,
    feedback: tags.length > 0 ? verbalizeTags(tags) : null,
  };
}
