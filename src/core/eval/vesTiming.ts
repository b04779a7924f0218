// BIRD's R-VES over an evaluation run (bird-bench/mini_dev evaluation/evaluation_ves.py `iterated_execute_sql`): each
// item the EX check passed has its prediction and gold run alternately (prediction first, as the official loop does)
// `iterations` times on its database (official: 100), and the runner's time of each run gives the gold/pred ratio
// birdVes.ts turns into a reward tier. An item that fails or times out during the timing rounds scores 0, as the
// official loop's exception does. Items are timed a few at once (the official script times them in parallel
// processes too); wall-clock times vary by machine and load.
import type { ExecRequest } from '../db/types';
import { timeRatio, vesReward } from './birdVes';
import type { BatchExecutor, ExecVerdict } from './execution';
import type { EvalMode } from './modes';

interface VesItem {
  dbId: string;
  gold: string;
  pred: string | undefined;
}

interface VesOptions {
  mode: EvalMode;
  dbDir: string;
  timeoutMs: number;
  run: BatchExecutor;
  /** Timed rounds per item (official: 100). */
  iterations: number;
  /** Items timed at once. */
  concurrency: number;
}

/** The R-VES reward of every item (0 where the EX verdict failed), in input order. */
export async function vesRewards(items: VesItem[], verdicts: ExecVerdict[], opts: VesOptions): Promise<number[]> {
  const rewards = new Array<number>(items.length).fill(0);
  const todo = items.flatMap((it, i) => (verdicts[i].exec && it.pred !== undefined ? [i] : []));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < todo.length) {
      const i = todo[next++];
      const it = items[i];
      const db = opts.mode.databases(opts.dbDir, it.dbId)[0];
      if (db === undefined) continue;
      const prepared = opts.mode.prepare(it.gold, it.pred!, {});
      const req = (sql: string): ExecRequest => ({
        db,
        sql,
        timeoutMs: opts.timeoutMs,
        maxRows: Infinity,
        maxCellChars: Infinity,
      });
      const goldMs: number[] = [],
        predMs: number[] = [];
      let failed = false;
      for (let k = 0; k < opts.iterations && !failed; k++) {
        const [p] = await opts.run([req(prepared.pred)]);
        const [g] = await opts.run([req(prepared.gold)]);
        if (!g.ok || !p.ok) failed = true;
        goldMs.push(g.ms);
        predMs.push(p.ms);
      }
      rewards[i] = failed ? 0 : vesReward(true, timeRatio(goldMs, predMs));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, todo.length)) }, worker));
  return rewards;
}
