// Scores the samples of one question: each sample's execution verdict against the gold (the evaluator's own,
// exactly as `quarry eval` would give it on predictions.sql), the majority vote and pass@K over the voting samples
// (votePool.ts says which those are).
import type { ExactMatcher, ExactMatches } from './exactMatches';
import type { SqlPool } from '../db/pool';
import type { ExecRequest } from '../db/types';
import { evaluateExecution, type ExecReason } from '../eval/execution';
import type { EvalMode } from '../eval/modes';
import { toResultTable } from '../eval/pyValues';
import { majorityVote, passAtK, sameResultIn, type VoteBallot } from '../eval/vote';
import type { DatasetTask } from '../datasets/types';
import { oneLine, predictionLine } from './predictionLine';
import { stringExactMatch } from '../rewards/terms/mtsqlr1';

interface SampleScore {
  sample: number;
  /** The line written for this sample (predictions.sql holds sample 0's). */
  prediction: string;
  exec: boolean;
  reason: ExecReason;
  detail?: string;
  /** MTSQL-R1's string EM of this sample's final SQL (§3.3.2), when the run computed exact matches: the curriculum
   *  (§3.3.1) counts a sample correct "measured by EX and EM". */
  em?: boolean;
}

export interface QuestionScore {
  index: number;
  id: string;
  dbId: string;
  level: string | null;
  /** SParC/CoSQL interaction index. */
  interaction?: number;
  samples: SampleScore[];
  greedy: boolean;
  /** null when there is no vote (K = 1). */
  majority: boolean | null;
  /** Some voting sample is right; null when there is no vote. */
  passAtK: boolean | null;
  /** The sample whose answer the vote picked (null: no vote, or no voting sample executed). */
  voteWinner: number | null;
  /** Voting samples grouped by equal results, largest first, as sample numbers (empty when there is no vote). */
  voteGroups: number[][];
  /** The gold result is empty on some database: any prediction returning no rows scores there ([] == []). */
  goldEmpty: boolean;
  /** The greedy prediction's exact matches (exactMatches.ts), when the run computed them. */
  em?: ExactMatches;
}

interface ScoreContext {
  mode: EvalMode;
  dbDir: string;
  timeoutMs: number;
  pool: SqlPool;
  /** Scores the greedy prediction's exact-set and string matches. */
  exact?: ExactMatcher;
}

/** The gold exactly as gold.sql holds it, so `quarry eval` on the written files runs the same statements. */
export function goldLine(task: DatasetTask): string {
  return oneLine(task.gold);
}

/**
 * `finals[i]` is sample i's final SQL (sample 0 greedy); `voters` are the sample numbers that vote, default all of
 * them when there are several (Quarry's greedy + samples pool).
 */
export async function scoreQuestion(
  task: DatasetTask,
  finals: (string | null)[],
  ctx: ScoreContext,
  voters: number[] = finals.length > 1 ? finals.map((_, i) => i) : [],
): Promise<QuestionScore> {
  const predictions = finals.map(predictionLine);
  const verdicts = await evaluateExecution(
    predictions.map((pred, sample) => ({ index: sample, dbId: task.dbId, gold: goldLine(task), pred })),
    {
      mode: ctx.mode,
      dbDir: ctx.dbDir,
      timeoutMs: ctx.timeoutMs,
      run: (reqs) => ctx.pool.execBatch(reqs),
      // The samples share the gold query: one group per database, judged in a SQL worker.
      runGroups: (groups) => ctx.pool.execGroups(groups),
    },
  );
  const samples: SampleScore[] = verdicts.map((v, sample) => ({
    sample,
    prediction: predictions[sample],
    exec: v.exec,
    reason: v.reason,
    ...(v.detail ? { detail: v.detail } : {}),
    ...(ctx.exact ? { em: finals[sample] !== null && stringExactMatch(finals[sample], task.gold) } : {}),
  }));
  const voting = voters.length > 0;
  let vote = { winner: null as number | null, groups: [] as number[][] };
  if (voting) {
    vote = majorityVote(await ballots(task, finals, predictions, new Set(voters), ctx), sameResultIn(ctx.mode));
  }
  return {
    index: task.index,
    id: task.id,
    dbId: task.dbId,
    level: task.level,
    samples,
    ...(task.interaction !== undefined ? { interaction: task.interaction } : {}),
    greedy: samples[0].exec,
    majority: voting ? vote.winner !== null && samples[vote.winner].exec : null,
    passAtK: voting ? passAtK(voters.map((i) => samples[i].exec)) : null,
    voteWinner: vote.winner,
    voteGroups: vote.groups,
    goldEmpty: verdicts.some((v) => v.goldEmpty),
    ...(ctx.exact ? { em: ctx.exact.match(task.gold, finals[0], task.dbId, task.dbPath) } : {}),
  };
}

/**
 * Each voting sample's executed answer on the question's database, by sample number (non-voters and samples with no
 * answer cast no vote: null); the same text runs once.
 */
async function ballots(
  task: DatasetTask,
  finals: (string | null)[],
  predictions: string[],
  voters: ReadonlySet<number>,
  ctx: ScoreContext,
): Promise<VoteBallot[]> {
  const votes = (i: number) => voters.has(i) && finals[i] !== null && finals[i]!.trim() !== '';
  const distinct = [...new Set(predictions.filter((_, i) => votes(i)))];
  const reqs: ExecRequest[] = distinct.map((sql) => ({
    db: task.dbPath,
    sql,
    timeoutMs: ctx.timeoutMs,
    maxRows: Infinity,
    maxCellChars: Infinity,
  }));
  const results = await ctx.pool.execBatch(reqs);
  const bySql = new Map(distinct.map((sql, i) => [sql, results[i]]));
  return predictions.map((sql, i) => {
    const r = votes(i) ? bySql.get(sql) : undefined;
    return r?.ok ? toResultTable(r) : null;
  });
}
