// Runs gold/prediction pairs on several database files with the spider evaluation mode's own rules and judge (the
// statements run and are judged in the SQL pool's workers), and answers per file and pair: same answer or not.
import type { SqlPool } from '../../db/pool';
import { type ExecVerdict, evaluateExecution } from '../execution';
import { type EvalMode, evalMode } from '../modes';

export interface Pair {
  gold: string;
  pred: string;
}

/** verdicts[f][p]: pair p judged on files[f] alone. */
export async function judgePairs(
  pairs: Pair[],
  files: string[],
  pool: SqlPool,
  timeoutMs: number,
): Promise<ExecVerdict[][]> {
  const spider = evalMode('spider');
  // Each file is a "db_id" of its own: the item's dbId is the file's index.
  const mode: EvalMode = { ...spider, databases: (_dir, id) => [files[Number(id)]] };
  const items = files.flatMap((_, f) =>
    pairs.map((p, i) => ({ index: f * pairs.length + i, dbId: String(f), gold: p.gold, pred: p.pred })),
  );
  const verdicts = await evaluateExecution(items, {
    mode,
    dbDir: '',
    timeoutMs,
    run: (reqs) => pool.execBatch(reqs),
    runGroups: (groups) => pool.execGroups(groups),
  });
  return files.map((_, f) => verdicts.slice(f * pairs.length, (f + 1) * pairs.length));
}
