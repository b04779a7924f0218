// Does a predicted SQL return the gold result? Progress-SQL stops a rollout at the first SQL that "matches the
// execution result of the gold SQL" (Algorithm 1, lines 6-7), and the protocol reads a null feedback as exactly that.
// FeedbackSource is synchronous, so the judgement runs in a short-lived child process (judgeWorker.js) through
// spawnSync: it blocks for the two statements only and is killed on timeout, so a runaway prediction cannot hang
// the caller. Start-up costs tens of milliseconds, small beside one model generation per turn.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ExecReason } from '../../eval/execution';

interface Judgement {
  /** true: same result as the gold; false: different (or the prediction failed); null: could not be decided. */
  correct: boolean | null;
  reason: ExecReason | 'judge-timeout' | 'judge-failed';
  detail: string | null;
}

export type ResultJudge = (predSql: string, goldSql: string, dbPath: string) => Judgement;

export interface JudgeOptions {
  /** Comparison mode of the evaluator (spider | bird | omnisql). Default spider. */
  mode?: string;
  /** Kill the judging process after this long (both statements together), ms. Default 30,000. */
  timeoutMs?: number;
  /** Path of judgeWorker.js; default beside this module (transpiled tree) or in dist/ (bundles). */
  workerPath?: string;
}

function defaultWorkerPath(): string {
  const beside = join(__dirname, 'judgeWorker.js');
  return existsSync(beside) ? beside : join(__dirname, '..', 'judgeWorker.js');
}

export function createResultJudge(opts: JudgeOptions = {}): ResultJudge {
  const workerPath = opts.workerPath ?? defaultWorkerPath();
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return (predSql, goldSql, dbPath) => {
    if (!existsSync(workerPath))
      return { correct: null, reason: 'judge-failed', detail: `judge worker not found at ${workerPath}` };
    const r = spawnSync(process.execPath, ['--max-old-space-size=768', workerPath], {
      input: JSON.stringify({ db: dbPath, gold: goldSql, pred: predSql, mode: opts.mode ?? 'spider' }),
      timeout: timeoutMs,
      killSignal: 'SIGKILL',
      maxBuffer: 1 << 20,
      encoding: 'utf8',
    });
    if (r.error && (r.error as NodeJS.ErrnoException).code === 'ETIMEDOUT') {
      return { correct: null, reason: 'judge-timeout', detail: `no verdict within ${timeoutMs} ms` };
    }
    if (r.status !== 0 || r.error) {
      return {
        correct: null,
        reason: 'judge-failed',
        detail: (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim(),
      };
    }
    try {
      const out = JSON.parse(r.stdout) as { correct: boolean; reason: ExecReason; detail: string | null };
      return { correct: out.correct, reason: out.reason, detail: out.detail };
    } catch {
      return { correct: null, reason: 'judge-failed', detail: `unreadable judge output: ${r.stdout.slice(0, 200)}` };
    }
  };
}
