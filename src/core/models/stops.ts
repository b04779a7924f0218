// Stop strings on the client side, for every backend: OpenAI's API takes at most 4, so any beyond those are applied
// here, and servers that strip the stop string do not always say which one matched; the onnx backend and VS Code's
// chat models have no server-side stops at all. Matching is on decoded text, not tokens: a stop string may span
// several tokens or start inside one, so a stream holds back just enough text that a stop is never half-emitted.

/** Splits stop strings into those the server is sent and those cut here (empty strings are dropped). */
export function splitStops(
  stops: readonly string[] | undefined,
  serverMax: number,
): { server: string[]; client: string[] } {
  const all = [...new Set((stops ?? []).filter((s) => typeof s === 'string' && s !== ''))];
  return { server: all.slice(0, serverMax), client: all.slice(serverMax) };
}

interface StopMatch {
  index: number;
  stop: string;
}

/**
 * The earliest occurrence of any stop string at or after `from` (a match may start before `from` if it ends after
 * it), the longer one when two start at the same place. Empty stop strings never match.
 */
export function findStop(text: string, stops: readonly string[], from = 0): StopMatch | null {
  let best: StopMatch | null = null;
  for (const stop of stops) {
    if (!stop) continue;
    const i = text.indexOf(stop, Math.max(0, from - stop.length + 1));
    if (i < 0) continue;
    if (!best || i < best.index || (i === best.index && stop.length > best.stop.length)) best = { index: i, stop };
  }
  return best;
}

/**
 * Length of the longest suffix of `text` that is a proper prefix of some stop string (it could still grow into one).
 */
function partialStopSuffix(text: string, stops: readonly string[]): number {
  let keep = 0;
  for (const stop of stops) {
    for (let j = Math.min(stop.length - 1, text.length); j > keep; j--) {
      if (text.endsWith(stop.slice(0, j))) {
        keep = j;
        break;
      }
    }
  }
  return keep;
}

/**
 * How much of generated `text` is safe to show: everything but a tail that could still grow into a stop string, and
 * but a trailing U+FFFD (a multi-byte character whose bytes have not all been generated yet).
 */
export function safeLength(text: string, stops: readonly string[]): number {
  let safe = text.length - partialStopSuffix(text, stops);
  while (safe > 0 && text.charCodeAt(safe - 1) === 0xfffd) safe--;
  return safe;
}

/**
 * Cuts a stream at the first client-side stop string. Text that could still turn out to begin a stop string is held
 * back, so the caller's onText never sees text past a stop.
 */
export class StopCutter {
  private held = '';
  private stopped: string | null = null;

  constructor(private readonly stops: readonly string[]) {}

  /** The text safe to pass on now, and the stop string if this delta completed one (then nothing more will come). */
  push(delta: string): { emit: string; stop: string | null } {
    if (this.stopped !== null) return { emit: '', stop: this.stopped };
    if (this.stops.length === 0) return { emit: delta, stop: null };
    this.held += delta;
    const hit = findStop(this.held, this.stops);
    if (hit) {
      this.stopped = hit.stop;
      const emit = this.held.slice(0, hit.index);
      this.held = '';
      return { emit, stop: hit.stop };
    }
    const keep = partialStopSuffix(this.held, this.stops);
    const emit = this.held.slice(0, this.held.length - keep);
    this.held = this.held.slice(this.held.length - keep);
    return { emit, stop: null };
  }

  /** Whatever was held back, once the stream has ended without a stop. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest;
  }
}

/**
 * When a server ended on 'stop' but did not say why, the stop string that plausibly ended it, or null when none or
 * several are. A stop string already in the text cannot have been the one (the server would have stopped there), and
 * a closing tag such as `</sql>` is only plausible after an unclosed `<sql>`. The model's own end-of-sequence token
 * is always possible too, so callers get `stopStringSource: 'inferred'` with it.
 */
export function inferStopString(text: string, stops: readonly string[]): string | null {
  const plausible = stops.filter((s) => s !== '' && !text.includes(s) && closesSomethingOpen(text, s));
  return plausible.length === 1 ? plausible[0] : null;
}

function closesSomethingOpen(text: string, stop: string): boolean {
  const m = /^\s*<\/([A-Za-z][\w.-]*)\s*>/.exec(stop);
  if (!m) return true;
  const tag = m[1].replace(/[.]/g, '\\.');
  const opens = text.match(new RegExp(`<${tag}(?=[\\s>])`, 'g'))?.length ?? 0;
  const closes = text.match(new RegExp(`</${tag}\\s*>`, 'g'))?.length ?? 0;
  return opens > closes;
}
