// Following a training job's metrics file as it grows, in either of the two line formats Quarry meets:
// - Quarry / TRL: `metrics.jsonl`, one flat object per logged step (`{"step": 3, "loss": 1.2, "lr": 1e-5, …}`), from
//   trainer/quarry_trainer/train/callbacks.py MetricsJsonl (appended; a step may be logged more than once, e.g. the
//   closing summary: its values merge into the step's row).
// - verl's file logger (`trainer.logger=['console','file']`): `{"step": N, "data": {"actor/entropy": …, …}}` per step
//   at VERL_FILE_LOGGER_PATH — verl 0.9.1 verl/utils/tracking.py FileLogger: `open(self.filepath, "wb")` (so a
//   resumed run truncates the file) and `orjson.dumps({"step": step, "data": data}) + b"\n"` per log call.
// Reads go by byte offset (only what was appended since the last read); a last line without its newline is left for
// the next read; a file that shrank or whose first line changed was rewritten (verl resuming): reading starts over,
// the rows already read are kept, and each step the new file logs replaces the old row of that step.
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';

/** One step's numeric values (nested objects flattened with `/`; non-numbers dropped). */
export interface MetricRow {
  step: number;
  values: Record<string, number>;
}

type MetricsFormat = 'quarry' | 'verl';

/** What one read found. */
interface MetricsRead {
  /** Rows new or changed by this read (their whole current values), in step order. */
  changed: MetricRow[];
  /** The file was rewritten since the last read (it shrank, or its first line is another). */
  restarted: boolean;
  /** Whole lines that were not metrics (not JSON, or no numeric step), this read. */
  skipped: number;
}

/** Numbers of `obj`, nested objects' keys joined with `/`. NaN/Infinity (and orjson's null for them) are dropped. */
export function flattenNumbers(obj: Record<string, unknown>, prefix = '', out: Record<string, number> = {}) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}/${k}` : k;
    if (typeof v === 'number' && Number.isFinite(v)) out[key] = v;
    else if (v && typeof v === 'object' && !Array.isArray(v)) flattenNumbers(v as Record<string, unknown>, key, out);
  }
  return out;
}

/** One line of either format as a row, or null when it is not a metrics line. */
export function parseMetricsLine(line: string): { row: MetricRow; format: MetricsFormat } | null {
  let o: unknown;
  try {
    o = JSON.parse(line);
  } catch {
    return null;
  }
  if (!o || typeof o !== 'object' || Array.isArray(o)) return null;
  const rec = o as Record<string, unknown>;
  const step = rec.step;
  if (typeof step !== 'number' || !Number.isFinite(step)) return null;
  const keys = Object.keys(rec);
  const data = rec.data;
  if (data && typeof data === 'object' && !Array.isArray(data) && keys.length === 2) {
    return { row: { step, values: flattenNumbers(data as Record<string, unknown>) }, format: 'verl' };
  }
  const rest: Record<string, unknown> = { ...rec };
  delete rest.step;
  return { row: { step, values: flattenNumbers(rest) }, format: 'quarry' };
}

const CHUNK = 1 << 20;

/** Follows one metrics file; `read()` returns what is new. Keeps every step's row read so far. */
export class MetricsFollower {
  private offset = 0;
  /** The first whole line of the file as read, to notice the file being rewritten under the same size. */
  private firstLine: Buffer | null = null;
  /** Steps seen since the file was last (re)started: a repeat within one generation merges, across them replaces. */
  private generation = new Set<number>();
  private readonly rows = new Map<number, Record<string, number>>();
  format: MetricsFormat | null = null;

  constructor(readonly file: string) {}

  /** Every row so far, in step order. */
  all(): MetricRow[] {
    return [...this.rows.entries()].sort((a, b) => a[0] - b[0]).map(([step, values]) => ({ step, values }));
  }

  /** The highest step read, or null. */
  latestStep(): number | null {
    let max: number | null = null;
    for (const s of this.rows.keys()) if (max === null || s > max) max = s;
    return max;
  }

  read(): MetricsRead {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return { changed: [], restarted: false, skipped: 0 };
    }
    try {
      return this.readFrom(fd);
    } finally {
      closeSync(fd);
    }
  }

  private restart(): void {
    this.offset = 0;
    this.firstLine = null;
    this.generation = new Set();
  }

  private readFrom(fd: number): MetricsRead {
    const size = fstatSync(fd).size;
    let restarted = false;
    if (size < this.offset) restarted = true;
    else if (this.firstLine) {
      const head = Buffer.alloc(this.firstLine.length);
      const n = readSync(fd, head, 0, head.length, 0);
      if (n < head.length || !head.equals(this.firstLine)) restarted = true;
    }
    if (restarted) this.restart();
    const changed = new Set<number>();
    let skipped = 0;
    while (this.offset < size) {
      const buf = Buffer.alloc(Math.min(size - this.offset, CHUNK));
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      const end = buf.subarray(0, n).lastIndexOf(0x0a);
      if (end < 0) {
        // No whole line in this chunk: a half-written last line (kept for later), or a line longer than a chunk.
        if (n < CHUNK) break;
        this.offset += n;
        skipped++;
        continue;
      }
      let start = 0;
      while (start <= end) {
        const nl = buf.indexOf(0x0a, start);
        const bytes = buf.subarray(start, nl);
        if (this.offset === 0 && start === 0) this.firstLine = Buffer.from(buf.subarray(0, nl + 1));
        start = nl + 1;
        const line = bytes.toString('utf8').trim();
        if (line === '') continue;
        const parsed = parseMetricsLine(line);
        if (!parsed) {
          skipped++;
          continue;
        }
        this.format ??= parsed.format;
        this.take(parsed.row);
        changed.add(parsed.row.step);
      }
      this.offset += end + 1;
    }
    return {
      changed: [...changed].sort((a, b) => a - b).map((step) => ({ step, values: { ...this.rows.get(step)! } })),
      restarted,
      skipped,
    };
  }

  private take(row: MetricRow): void {
    const before = this.rows.get(row.step);
    if (before && this.generation.has(row.step)) Object.assign(before, row.values);
    else this.rows.set(row.step, { ...row.values });
    this.generation.add(row.step);
  }
}
