// SQL-Trail's r_bigram (App. A.4): Jaccard similarity of the sets of token bigrams of predicted and gold queries.
// Tokens are those of the normalised query (normalize.ts), so `SELECT name FROM student` has the bigrams
// {SELECT name, name FROM, FROM student} and scores 2/4 against `SELECT name FROM teacher`, as in the paper.
import { normalizedTokens } from './normalize';

/** The set of adjacent token pairs of the normalised query, each as "a b". */
export function sqlBigrams(sql: string): Set<string> {
  const tokens = normalizedTokens(sql);
  const out = new Set<string>();
  for (let i = 0; i + 1 < tokens.length; i++) out.add(`${tokens[i]} ${tokens[i + 1]}`);
  return out;
}

/** |A ∩ B| / |A ∪ B|; two empty sets count as identical (1). */
export function jaccard<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/** r_bigram for a predicted and a gold query. */
export function bigramSimilarity(predicted: string, gold: string): number {
  return jaccard(sqlBigrams(predicted), sqlBigrams(gold));
}
