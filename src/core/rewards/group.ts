// GRPO-side statistics over groups of samples of one question. Pure functions: no I/O, no randomness.

/** GRPO's ε in A_i = (r_i − mean(r)) / (std(r) + ε); the value verl (MTSQL-R1's trainer) uses. */
export const DEFAULT_ADVANTAGE_EPSILON = 1e-6;

interface AdvantageOptions {
  epsilon?: number;
  /**
   * `sample` (default): the unbiased standard deviation (n − 1), as torch.std in verl's GRPO estimator;
   * `population`: divide by n.
   */
  std?: 'sample' | 'population';
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export function standardDeviation(xs: readonly number[], kind: 'sample' | 'population' = 'sample'): number {
  const n = xs.length;
  const d = kind === 'sample' ? n - 1 : n;
  if (d <= 0) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / d);
}

/**
 * Group-normalised advantages A_i = (r_i − mean(r)) / (std(r) + ε) (MTSQL-R1 §3.3.3, GRPO). A group of one has no
 * baseline: its advantage is 0. A zero-variance group gets all zeros (the numerator is 0).
 */
export function groupAdvantages(rewards: readonly number[], opts: AdvantageOptions = {}): number[] {
  const eps = opts.epsilon ?? DEFAULT_ADVANTAGE_EPSILON;
  if (rewards.length <= 1) return rewards.map(() => 0);
  const m = mean(rewards);
  const s = standardDeviation(rewards, opts.std ?? 'sample');
  return rewards.map((r) => (r - m) / (s + eps));
}

/** A group whose rewards are all equal (within `tolerance`) gives GRPO no gradient. */
export function isZeroVariance(rewards: readonly number[], tolerance = 1e-12): boolean {
  if (rewards.length === 0) return true;
  let lo = Infinity,
    hi = -Infinity;
  for (const r of rewards) {
    if (r < lo) lo = r;
    if (r > hi) hi = r;
  }
  return hi - lo <= tolerance;
}

/** Ids of the groups with zero reward variance, in input order. */
export function zeroVarianceGroups(groups: ReadonlyMap<string, readonly number[]>, tolerance = 1e-12): string[] {
  return [...groups].filter(([, rs]) => isZeroVariance(rs, tolerance)).map(([id]) => id);
}

/**
 * pass@G as SQL-Trail uses it (App. A.6: "pass@6 ≈ 1/6"): the share of the G samples that are correct.
 * 0 for an empty group.
 */
export function passAtG(correct: number, total: number): number {
  if (total <= 0) return 0;
  if (correct < 0 || correct > total)
    throw new RangeError(`correct (${correct}) must be between 0 and total (${total})`);
  return correct / total;
}

/** The unbiased pass@k estimator 1 − C(n−c, k)/C(n, k) for n samples with c correct (k ≤ n). */
export function passAtK(n: number, c: number, k: number): number {
  if (k <= 0 || k > n) throw new RangeError(`k (${k}) must be between 1 and n (${n})`);
  if (c < 0 || c > n) throw new RangeError(`c (${c}) must be between 0 and n (${n})`);
  if (n - c < k) return 1;
  let p = 1;
  for (let i = n - c + 1; i <= n; i++) p *= 1 - k / i;
  return 1 - p;
}

/** SQL-Trail's difficulty score (App. A.6, eq. 13): S(q) = pass@G(q) if 0 < pass@G(q) < 1, else 1. */
export function difficultyScore(pass: number): number {
  return pass > 0 && pass < 1 ? pass : 1;
}

interface GroupOutcome {
  id: string;
  correct: number;
  total: number;
}

export interface RankedQuestion extends GroupOutcome {
  pass: number;
  score: number;
}

/**
 * SQL-Trail's "hard but solvable" ranking: ascending S(q), so questions solved occasionally come first and those
 * never or always solved (S = 1) last; ties keep input order. `top` keeps the first N (the paper takes 700).
 */
export function rankHardButSolvable(items: readonly GroupOutcome[], top?: number): RankedQuestion[] {
  const ranked = items
    .map((it, i) => ({ it, i, pass: passAtG(it.correct, it.total) }))
    .map(({ it, i, pass }) => ({ i, q: { ...it, pass, score: difficultyScore(pass) } }))
    .sort((a, b) => a.q.score - b.q.score || a.i - b.i)
    .map((x) => x.q);
  return top === undefined ? ranked : ranked.slice(0, top);
}

interface CurriculumOptions {
  /** Samples per question, N (the paper samples 20). */
  samples?: number;
  /** Questions per bin (the paper uses 2000). */
  binSize?: number;
}

interface CurriculumBins<T extends { id: string; successes: number }> {
  /** levels[0] is Curriculum Data = 1, the easiest. */
  levels: T[][];
  /** Questions solved in all N samples: dropped as too easy. */
  discarded: T[];
}

/**
 * MTSQL-R1's curriculum (§3.3.1): s_i = successes out of N; drop s_i = N; sort the rest by s_i descending (higher =
 * easier; ties keep input order) and cut into contiguous bins of binSize, level 1 the easiest.
 */
export function curriculumBins<T extends { id: string; successes: number }>(
  items: readonly T[],
  opts: CurriculumOptions = {},
): CurriculumBins<T> {
  const n = opts.samples ?? 20;
  const size = opts.binSize ?? 2000;
  if (!(size >= 1)) throw new RangeError(`binSize must be at least 1 (got ${size})`);
  for (const it of items) {
    if (!Number.isInteger(it.successes) || it.successes < 0 || it.successes > n) {
      throw new RangeError(`question ${it.id}: successes ${it.successes} is not an integer between 0 and N = ${n}`);
    }
  }
  const discarded = items.filter((it) => it.successes === n);
  const kept = items
    .map((it, i) => ({ it, i }))
    .filter(({ it }) => it.successes < n)
    .sort((a, b) => b.it.successes - a.it.successes || a.i - b.i)
    .map(({ it }) => it);
  const levels: T[][] = [];
  for (let i = 0; i < kept.length; i += size) levels.push(kept.slice(i, i + size));
  return { levels, discarded };
}

/**
 * MTIR-SQL's GRPO-Filter rollout filter (§3.1, eq. 3): keep (x, y) with F(x, y) > τ. The paper leaves F and τ
 * open ("discard invalid rollouts"); callers choose F (Quarry's default in `quarry score` is the mtir format term,
 * 0.1 valid / −0.1 invalid, with τ = 0: keep well-formed rollouts).
 */
export function filterTrajectories<T>(
  items: readonly T[],
  F: (item: T) => number,
  tau: number,
): { kept: T[]; dropped: T[] } {
  const kept: T[] = [],
    dropped: T[] = [];
  for (const it of items) (F(it) > tau ? kept : dropped).push(it);
  return { kept, dropped };
}
