// Messages between the pool (parent) and a SQL worker process, sent with 'advanced' serialization.
import type { ExecRequest, ExecResult } from './types';

/**
 * Statements run one after another on one worker, each under its own budget, whose results the worker reduces with
 * the reducer named `kind` (sqlWorker.ts): it answers each statement with one `step` message carrying only what the
 * reducer keeps, and may stop early (`last`). The evaluator's groups (kind 'eval': a gold query and the predictions
 * scored against it) send verdicts back instead of rows.
 */
export interface GroupRequest {
  kind: 'eval';
  reqs: ExecRequest[];
  params: unknown;
}

/** Statements (or groups) for a worker to run one after another, answering each as it finishes. */
export interface WorkerRequest {
  jobs: ({ id: number; req: ExecRequest } | { id: number; group: GroupRequest })[];
}
export type WorkerMessage =
  | { type: 'ready' }
  | { type: 'result'; id: number; result: ExecResult }
  | { type: 'step'; id: number; value: unknown; last: boolean };
