// BIRD mini_dev's R-VES, the reward-based valid efficiency score (bird-bench/mini_dev evaluation/evaluation_ves.py
// `iterated_execute_sql`, `clean_abnormal`, `compute_ves`). Only a correct prediction (set of rows equal to the
// gold's) is timed: gold and prediction run alternately N times (official: 100), each round's gold/pred time ratio
// is kept unless it lies 3 standard deviations or more from the mean, and the mean ratio picks a reward tier.
// The ratios are wall-clock measurements and vary by machine and load; only the tiering is exact.

/**
 * numpy's float64 sum (pairwise_sum in numpy/_core/src/umath/loops_utils.h): a plain loop below 8 values, eight
 * running sums up to 128, halves beyond — so mean and std round exactly as np.mean / np.std do.
 */
export function numpySum(xs: number[], from = 0, n = xs.length): number {
  if (n < 8) {
    let s = 0;
    for (let i = from; i < from + n; i++) s += xs[i];
    return s;
  }
  if (n <= 128) {
    const r = xs.slice(from, from + 8);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += xs[from + i + j];
    let s = r[0] + r[1] + (r[2] + r[3]) + (r[4] + r[5] + (r[6] + r[7]));
    for (; i < n; i++) s += xs[from + i];
    return s;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return numpySum(xs, from, half) + numpySum(xs, from + half, n - half);
}

/** `clean_abnormal`: the values strictly within mean ± 3·std (np.mean, np.std with ddof 0). */
export function cleanAbnormal(xs: number[]): number[] {
  if (xs.length === 0) return [];
  const mean = numpySum(xs) / xs.length;
  const std = Math.sqrt(numpySum(xs.map((x) => (x - mean) * (x - mean))) / xs.length);
  return xs.filter((x) => x < mean + 3 * std && x > mean - 3 * std);
}

/**
 * The mean gold/pred time ratio after outliers are dropped. When every ratio is equal (std 0) none survives the
 * strict bounds, and the official script divides by zero: that item errors and scores 0, so NaN is returned here.
 */
export function timeRatio(goldMs: number[], predMs: number[]): number {
  const kept = cleanAbnormal(goldMs.map((g, i) => g / predMs[i]));
  return kept.length === 0 ? Number.NaN : kept.reduce((a, b) => a + b, 0) / kept.length;
}

/** The reward tier of a time ratio (0 for an incorrect prediction, whose ratio stays 0). */
export function vesReward(correct: boolean, ratio: number): number {
  if (!correct || Number.isNaN(ratio) || ratio === 0) return 0;
  if (ratio >= 2) return 1.25;
  if (ratio >= 1) return 1;
  if (ratio >= 0.5) return 0.75;
  if (ratio >= 0.25) return 0.5;
  return 0.25;
}

/** `compute_ves`: the mean of 100·√reward over the items. */
export function rVes(rewards: number[]): number {
  if (rewards.length === 0) return 0;
  return rewards.reduce((a, r) => a + Math.sqrt(r) * 100, 0) / rewards.length;
}
