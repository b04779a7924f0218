// Which samples a benchmark run's majority vote (and pass@K) counts. The papers that report voting vote over K
// *sampled* candidates, apart from the greedy run: SQL-Trail §4 "greedy decoding (Pass@1, zero-temperature) and
// majority voting over 8 sampled candidates using execution-result consensus"; Progress-SQL §5 "majority voting over 8
// samples (Vote@8)", with Greedy and Vote@8 as separate rows (App. E.5, Tables 9–12). Quarry's older definition votes
// over the greedy answer plus K−1 samples, which costs one episode less per question; it stays as an option.
import type { ProtocolName } from '../agent/types';

/**
 * `samples`: the papers' Vote@K — sample 0 is the greedy run, samples 1..K are sampled and only they vote (K + 1
 * episodes per question). `greedy+samples`: sample 0 (greedy) and samples 1..K−1 vote together (K episodes).
 */
export type VotePool = 'samples' | 'greedy+samples';

export const VOTE_POOLS: readonly VotePool[] = ['samples', 'greedy+samples'];

export function isVotePool(v: string): v is VotePool {
  return (VOTE_POOLS as readonly string[]).includes(v);
}

/**
 * The default pool for a protocol: the papers' definition where a paper's voting table is reproduced (SQL-Trail's
 * Maj column, Progress-SQL's Vote@8), greedy + samples for the protocols whose papers report no vote.
 */
export function defaultVotePool(protocol: ProtocolName): VotePool {
  return protocol === 'sqltrail' || protocol === 'progress' ? 'samples' : 'greedy+samples';
}

/** Episodes each question runs: K = 1 is the greedy run alone (no vote), whatever the pool. */
export function episodesPerQuestion(k: number, pool: VotePool): number {
  return k > 1 && pool === 'samples' ? k + 1 : k;
}

/** The sample numbers that vote (empty when K = 1: there is no vote). */
export function voterSamples(k: number, pool: VotePool): number[] {
  if (k <= 1) return [];
  const first = pool === 'samples' ? 1 : 0;
  return Array.from({ length: k }, (_, i) => first + i);
}

/** What report.json says about the vote. */
export interface VoteInfo {
  pool: VotePool;
  /** Candidates per vote (--samples). */
  k: number;
  /** The sample numbers that voted (sample 0 is greedy); empty when K = 1. */
  voters: number[];
  /** Episodes per question. */
  episodes: number;
  /** The pool was the protocol's default, not chosen with --vote-pool. */
  default: boolean;
}

export function voteInfo(k: number, pool: VotePool, isDefault: boolean): VoteInfo {
  return { pool, k, voters: voterSamples(k, pool), episodes: episodesPerQuestion(k, pool), default: isDefault };
}

/** One line for the printed report: what the majority and pass@K rows were computed over. */
export function describeVote(v: VoteInfo): string {
  if (v.k <= 1) return 'no vote (K = 1: the greedy run only)';
  const how =
    v.pool === 'samples'
      ? `Vote@${v.k} over ${v.k} sampled candidates (samples 1..${v.k}), apart from the greedy run`
      : `majority over the greedy answer and ${v.k - 1} sample${v.k === 2 ? '' : 's'} (samples 0..${v.k - 1})`;
  return `${how}; --vote-pool ${v.pool}${v.default ? ' (the default for this protocol)' : ''}`;
}
