// Distillation as in Zhong, Yu and Klein (EMNLP 2020): from candidate databases, each telling apart some set of
// gold/neighbour pairs, greedily keep the one that tells apart the most pairs not yet told apart, until `max` are kept
// or none adds any. Ties go to the earlier candidate, so the choice is deterministic.

interface CoverStep {
  /** Index of the chosen candidate. */
  candidate: number;
  /** Pairs it told apart that no earlier choice had. */
  gain: number;
}

export function greedyCover(toldApart: readonly (readonly number[])[], max: number): CoverStep[] {
  const covered = new Set<number>();
  const steps: CoverStep[] = [];
  const used = new Set<number>();
  while (steps.length < max) {
    let best = -1,
      bestGain = 0;
    toldApart.forEach((pairs, c) => {
      if (used.has(c)) return;
      let gain = 0;
      for (const p of pairs) if (!covered.has(p)) gain++;
      if (gain > bestGain) {
        best = c;
        bestGain = gain;
      }
    });
    if (best < 0) break;
    used.add(best);
    for (const p of toldApart[best]) covered.add(p);
    steps.push({ candidate: best, gain: bestGain });
  }
  return steps;
}
