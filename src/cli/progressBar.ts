// A progress display on stderr for long commands: on a terminal a bar redrawn in place (count, rate, ETA); otherwise
// (logs, CI, pipes) a plain line now and then, so a log file is not flooded with carriage returns.

interface ProgressOptions {
  /** Shown before the bar. */
  label?: string;
  /** Force terminal or plain mode; default: whether the stream is a TTY. */
  tty?: boolean;
  /** Plain mode: the least time between two lines, ms (default 10 s). The final line is always written. */
  intervalMs?: number;
  /** Terminal mode: the least time between two redraws, ms (default 100). */
  redrawMs?: number;
  /** Clock, ms; tests pass their own. */
  now?: () => number;
  /** Terminal width for the bar; default the stream's columns or 80. */
  columns?: number;
}

export interface Progress {
  /** `done` items finished of the total; `note` is appended (e.g. "EX 0.61"). */
  update(done: number, note?: string): void;
  /** Writes the last state and ends the line. Idempotent. */
  finish(note?: string): void;
}

/** "1:05", "12:00:03"; "?" when unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600),
    m = Math.floor((s % 3600) / 60),
    sec = s % 60;
  const mm = h > 0 ? String(m).padStart(2, '0') : String(m);
  return `${h > 0 ? `${h}:` : ''}${mm}:${String(sec).padStart(2, '0')}`;
}

function formatRate(perSecond: number): string {
  if (!Number.isFinite(perSecond) || perSecond <= 0) return '-/s';
  return perSecond >= 1 ? `${perSecond.toFixed(perSecond >= 10 ? 0 : 1)}/s` : `${(60 * perSecond).toFixed(1)}/min`;
}

export function createProgress(stream: NodeJS.WritableStream, total: number, opts: ProgressOptions = {}): Progress {
  const tty = opts.tty ?? (stream as { isTTY?: boolean }).isTTY === true;
  const now = opts.now ?? Date.now;
  const started = now();
  const intervalMs = opts.intervalMs ?? 10_000;
  const redrawMs = opts.redrawMs ?? 100;
  const columns = opts.columns ?? (stream as { columns?: number }).columns ?? 80;
  let last = -Infinity;
  let done = 0;
  let finished = false;

  const stats = (note?: string): string => {
    const elapsed = (now() - started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : NaN;
    const eta = done >= total ? 0 : rate > 0 ? (total - done) / rate : NaN;
    const pct = total > 0 ? Math.floor((100 * done) / total) : 100;
    const when = done >= total ? `in ${formatDuration(elapsed)}` : `ETA ${formatDuration(eta)}`;
    return `${done}/${total} ${pct}% ${formatRate(rate)} ${when}${note ? `  ${note}` : ''}`;
  };

  const draw = (note?: string) => {
    const label = opts.label ? `${opts.label} ` : '';
    if (!tty) {
      stream.write(`${label}${stats(note)}\n`);
      return;
    }
    const text = stats(note);
    const width = Math.max(10, Math.min(40, columns - label.length - text.length - 4));
    const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : width;
    // \x1b[K clears what a longer previous line left behind.
    stream.write(`\r${label}[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text}\x1b[K`);
  };

  return {
    update(n, note) {
      if (finished) return;
      done = n;
      const t = now();
      if (t - last < (tty ? redrawMs : intervalMs)) return;
      last = t;
      draw(note);
    },
    finish(note) {
      if (finished) return;
      finished = true;
      draw(note);
      if (tty) stream.write('\n');
    },
  };
}
