// The environment service's server-side maxima: every limit a client may name (a statement's timeoutMs and maxRows,
// an episode's maxTurns, a reward's turnBudget, a batch's length, a text field's length) is held to one of these,
// which the operator sets with `quarry serve-env` flags. A client asking for more gets the maximum (numbers) or a 400
// (text, batches): no request can switch a limit off or pin the SQL workers longer than the operator allows.
import { ServiceError } from './errors';

export interface ServiceLimits {
  /** Longest a statement may run, ms (a client's timeoutMs above it is lowered to it; rewards use it too). */
  maxTimeoutMs: number;
  /** Most rows a /v1/execute answer keeps. */
  maxRows: number;
  /** Most turns an episode may have (maxTurns), and most turns a scored trajectory or a turnBudget may name. */
  maxTurns: number;
  /** Most items in one batch request, and most items of `history`. */
  maxBatch: number;
  /** Longest text field (question, SQL, an action…), characters. */
  maxFieldChars: number;
  /** Request items (statements, rewards, steps…) being served at once across all clients before a 429. */
  maxInFlight: number;
  /** Largest panel file, bytes. */
  maxPanelBytes: number;
}

export const DEFAULT_LIMITS: Readonly<ServiceLimits> = Object.freeze({
  maxTimeoutMs: 30_000,
  maxRows: 10_000,
  maxTurns: 32,
  maxBatch: 1024,
  maxFieldChars: 256 * 1024,
  maxInFlight: 4096,
  maxPanelBytes: 1 << 20,
});

/** A client-given positive integer held to `max`; absent is `fallback` (also held to `max`). */
export function capped(v: unknown, key: string, max: number, fallback?: number): number | undefined {
  if (v === undefined || v === null) return fallback === undefined ? undefined : Math.min(fallback, max);
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new ServiceError('bad-request', `"${key}" must be a positive integer`);
  return Math.min(v, max);
}

/** Counts the request items being served; `admit` refuses what would go over the maximum (429). */
export class InFlight {
  private n = 0;

  constructor(private readonly max: number) {}

  get count(): number {
    return this.n;
  }

  /** Reserves `items` slots for the duration of `work`. */
  async admit<T>(items: number, work: () => Promise<T>): Promise<T> {
    if (this.n + items > this.max)
      throw new ServiceError(
        'too-many',
        `the server is busy: ${this.n} items are being served (the most is ${this.max}); retry later`,
      );
    this.n += items;
    try {
      return await work();
    } finally {
      this.n -= items;
    }
  }
}
