// One-shot result judge, run as its own process by judge.ts: reads {db, gold, pred, mode} as JSON on stdin, runs both
// statements read-only with the sandbox's statement runner, compares them with the evaluator's comparator
// (rewards/verdict.ts computeVerdict) and prints {correct, reason, detail, goldEmpty} as JSON. The parent kills it on
// timeout, which is the only way to stop a synchronous SQLite query.
import { readFileSync } from 'node:fs';
import { HandleCache } from '../../db/handleCache';
import { runStatement, failure } from '../../db/runStatement';
import { BUSY_TIMEOUT_MS } from '../../db/limits';
import { computeVerdict } from '../../rewards/verdict';
import { evalMode } from '../../eval/modes';
import type { ExecResult } from '../../db/types';
import type { ScoringResources } from '../../rewards/types';

interface JudgeRequest {
  db: string;
  gold: string;
  pred: string;
  mode?: string;
}

async function main(): Promise<void> {
  const req = JSON.parse(readFileSync(0, 'utf8')) as JudgeRequest;
  const handles = new HandleCache(2, BUSY_TIMEOUT_MS);
  const exec = (db: string, sql: string): Promise<ExecResult> => {
    try {
      return Promise.resolve(runStatement(handles.get(db), { db, sql, maxRows: Infinity, maxCellChars: Infinity }));
    } catch (err) {
      return Promise.resolve(failure('sql', (err as Error)?.message ?? String(err), 0));
    }
  };
  const resources: ScoringResources = { exec, memo: (_ns, _key, compute) => compute(), timeoutMs: 0 };
  const v = await computeVerdict(req.pred, req.gold, req.db, evalMode(req.mode ?? 'spider'), resources);
  process.stdout.write(
    JSON.stringify({ correct: v.correct, reason: v.reason, detail: v.detail ?? null, goldEmpty: v.goldEmpty }),
  );
}

main().catch((err) => {
  process.stderr.write(`judge: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});
