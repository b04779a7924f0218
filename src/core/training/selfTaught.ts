// MTSQL-R1's self-taught warm-start selection (§3.2.2, Algorithm 1, S1-S2) over one round's rollouts of a question:
// S1 keeps the trajectories whose final SQL is right by EX and EM (EM: R_EM, the string match); S2, difficulty-aware
// reject sampling: an easy question (Spider hardness) or one solved by every rollout keeps up to two short
// trajectories (≤ 2 interactions) at random; any other keeps long ones (≥ 2 interactions), three representatives
// "after clustering by embedding" — Quarry has no embedding model here, so it takes three far apart in SQL-token
// bigrams (farthest-point sampling from the shortest), its stand-in for cluster representatives.
import { jaccard, sqlBigrams } from '../sql/bigrams';

export interface Rollout {
  id: string;
  /** Interactions (assistant turns) in the trajectory. */
  turns: number;
  /** The model's text of every turn, for diversity. */
  text: string;
  /** EX: the final SQL returns the gold's result. */
  ex: boolean;
  /** EM: the final SQL is the gold string (MTSQL-R1's R_EM). */
  em: boolean;
}

interface Selection {
  /** S1: right by EX and EM. */
  valid: number;
  /** The kept trajectories' ids. */
  kept: string[];
  /** Which rule of S2 applied. */
  rule: 'easy-or-all-correct' | 'hard' | 'unsolved';
}

export function selectRollouts(rollouts: readonly Rollout[], hardness: string | null, random: () => number): Selection {
  const valid = rollouts.filter((r) => r.ex && r.em);
  if (valid.length === 0) return { valid: 0, kept: [], rule: 'unsolved' };
  const allCorrect = valid.length === rollouts.length;
  if (hardness === 'easy' || allCorrect) {
    const short = valid.filter((r) => r.turns <= 2);
    const shuffled = [...short].sort(() => random() - 0.5);
    return { valid: valid.length, kept: shuffled.slice(0, 2).map((r) => r.id), rule: 'easy-or-all-correct' };
  }
  const long = valid.filter((r) => r.turns >= 2);
  const grams = new Map(long.map((r) => [r.id, sqlBigrams(r.text)]));
  const picked: Rollout[] = [];
  const pool = [...long].sort((a, b) => a.turns - b.turns || a.id.localeCompare(b.id));
  if (pool.length) picked.push(pool.shift()!);
  while (picked.length < 3 && pool.length) {
    let best = 0;
    let bestDistance = -1;
    pool.forEach((r, i) => {
      const d = Math.min(...picked.map((p) => 1 - jaccard(grams.get(r.id)!, grams.get(p.id)!)));
      if (d > bestDistance) {
        bestDistance = d;
        best = i;
      }
    });
    picked.push(pool.splice(best, 1)[0]);
  }
  return { valid: valid.length, kept: picked.map((r) => r.id), rule: 'hard' };
}
