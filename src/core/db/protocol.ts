// Messages between the pool (parent) and a SQL worker process, sent with 'advanced' serialization.
import type { ExecRequest, ExecResult } from './types';

/** Statements for a worker to run one after another, answering each with its own result message as it finishes. */
export interface WorkerRequest {
  jobs: { id: number; req: ExecRequest }[];
}
export type WorkerMessage = { type: 'ready' } | { type: 'result'; id: number; result: ExecResult };
