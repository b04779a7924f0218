// Messages between the pool (parent) and a SQL worker process, sent with 'advanced' serialization.
import type { ExecRequest, ExecResult } from './types';

export interface WorkerRequest { id: number; req: ExecRequest }
export type WorkerMessage = { type: 'ready' } | { type: 'result'; id: number; result: ExecResult };
