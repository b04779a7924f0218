// When and how long to wait before trying a model server again.

export interface RetryPolicy {
  /** Retries after the first attempt (so maxRetries + 1 attempts in all). */
  maxRetries: number;
  /** The first backoff; each retry doubles it, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the call gives up and says what the server asked for. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
};

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random, so clients that failed together do
 * not come back together, yet every wait still grows.
 */
export function backoffMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, retry - 1));
  return Math.round(step / 2 + (step / 2) * random());
}

/**
 * The wait a server asked for, in ms, or null. Reads OpenAI's `retry-after-ms` first, then the standard
 * `Retry-After` (seconds, or an HTTP date).
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get('retry-after');
  if (ra === null || ra.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.max(0, Math.round(Number(ra) * 1000));
  const date = Date.parse(ra);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = (): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
