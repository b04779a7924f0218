// Test-time aggregation over K sampled answers to one question: majority vote by execution-result consensus and
// pass@K.
//
// Majority vote (SQL-Trail §4.3 "majority voting over 8 sampled candidates using execution-result consensus";
// Progress-SQL's Vote@8): each sample's final SQL is executed; samples whose SQL is missing or fails to execute
// (error, timeout, rejected) cast no vote; the others are grouped by result, two results being the same exactly when
// the evaluation mode's own comparator says so (spider: test-suite result_eq with rows as a multiset and columns
// permutable; bird: set of row tuples); the largest group wins. Neither paper states a tie-break: here a tie goes to
// the group whose first member has the lowest sample index (sample 0 is the greedy one, so ties favour greedy
// decoding), and the group's answer is that first member's SQL. When no sample executes there is no winner, and the
// question counts as wrong.
import type { EvalMode } from './modes';
import type { ResultTable } from './pyValues';

/** One sample's executed final answer; null when it had no SQL or its execution failed. */
export type VoteBallot = ResultTable | null;

type SameResult = (a: ResultTable, b: ResultTable) => boolean;

interface VoteOutcome {
  /** Sample index whose SQL is the voted answer; null when no sample executed. */
  winner: number | null;
  /** Groups of sample indexes with the same result, largest first (ties: lowest first index first). */
  groups: number[][];
}

/**
 * Result equality for voting, from the mode's comparator. Row order is ignored: voters agree on what, not how sorted.
 */
export function sameResultIn(mode: EvalMode): SameResult {
  return (a, b) => mode.compare(a, b, false) === 'match';
}

export function majorityVote(ballots: VoteBallot[], same: SameResult): VoteOutcome {
  const groups: { rep: ResultTable; members: number[] }[] = [];
  ballots.forEach((b, i) => {
    if (b === null) return;
    const g = groups.find((x) => same(x.rep, b));
    if (g) g.members.push(i);
    else groups.push({ rep: b, members: [i] });
  });
  // Groups are created in sample order, so a stable sort by size keeps the lowest first index first among equals.
  const ordered = groups.map((g) => g.members).sort((x, y) => y.length - x.length);
  return { winner: ordered.length > 0 ? ordered[0][0] : null, groups: ordered };
}

/** pass@K of one question: whether any of its K samples is correct. */
export function passAtK(correct: readonly boolean[]): boolean {
  return correct.some(Boolean);
}

/**
 * The unbiased estimator of pass@k from n samples of which c are correct (Chen et al., 2021):
 * 1 − C(n−c, k) / C(n, k), computed as a product so large n does not overflow.
 */
export function passAtKEstimate(n: number, c: number, k: number): number {
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(c) ||
    !Number.isInteger(k) ||
    n < 1 ||
    c < 0 ||
    c > n ||
    k < 1 ||
    k > n
  ) {
    throw new RangeError(`pass@k needs integers 0 <= c <= n and 1 <= k <= n (got n=${n}, c=${c}, k=${k})`);
  }
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}
