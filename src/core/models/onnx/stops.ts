// Stop strings are matched on decoded text, not on tokens: a stop string may span several tokens or start inside
// one. The streamer holds back just enough text that a stop string can never be half-emitted.

export interface StopMatch {
  index: number;
  stop: string;
}

/** The earliest stop string in `text` at or after `from` (a match may start before `from` if it ends after it). */
export function findStop(text: string, stops: readonly string[], from = 0): StopMatch | null {
  let best: StopMatch | null = null;
  for (const stop of stops) {
    if (!stop) continue;
    const i = text.indexOf(stop, Math.max(0, from - stop.length + 1));
    if (i >= 0 && (best === null || i < best.index)) best = { index: i, stop };
  }
  return best;
}

/**
 * How much of `text` is safe to show: everything except a tail that could still grow into a stop string, and
 * except a trailing U+FFFD (a multi-byte character whose bytes have not all been generated yet).
 */
export function safeLength(text: string, stops: readonly string[]): number {
  let safe = text.length;
  for (const stop of stops) {
    for (let k = Math.min(stop.length - 1, text.length); k > 0; k--) {
      if (text.endsWith(stop.slice(0, k))) { safe = Math.min(safe, text.length - k); break; }
    }
  }
  while (safe > 0 && text.charCodeAt(safe - 1) === 0xfffd) safe--;
  return safe;
}
