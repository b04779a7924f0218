// Shaping a job's metric rows for the job panel's charts (plain data, no DOM, no node: the webview imports it and the
// unit tests check it): one series per metric present, ordered and grouped the way a run is read (reward and its
// terms first, then accuracy, turns and lengths, the policy's entropy / KL / clipping, the optimiser, speed, the rest),
// cut to a step range, thinned to a drawable number of points (keeping each bucket's lowest and highest value so
// spikes survive), with the axis ranges a chart needs.
import type { MetricRow } from './metricsReader';

export interface Point {
  step: number;
  value: number;
}

export interface Series {
  metric: string;
  group: string;
  points: Point[];
}

/** The chart groups, in the order they are shown; a metric joins the first group whose pattern matches its name. */
const METRIC_GROUPS: ReadonlyArray<{ group: string; pattern: RegExp }> = [
  { group: 'reward', pattern: /(^|\/)(reward|rewards|score)(\b|_|\/|$)|critic\/(score|rewards)|^reward/i },
  { group: 'accuracy', pattern: /(^|\/|_)(ex|acc|accuracy|pass@?\w*|pass_at_\w+|em|exec\w*)(\/|_|$)/i },
  { group: 'turns', pattern: /turn/i },
  { group: 'length', pattern: /length|num_tokens|tokens\b/i },
  { group: 'entropy', pattern: /entropy/i },
  { group: 'kl', pattern: /(^|\/|_)kl(\/|_|$)|ppo_kl/i },
  { group: 'clipping', pattern: /clip/i },
  { group: 'optimizer', pattern: /(^|\/|_)(lr|learning_rate|grad_norm)(\/|_|$)/i },
  { group: 'loss', pattern: /loss/i },
  { group: 'speed', pattern: /throughput|perf\/|timing|seconds|time|mfu|per_sec/i },
];

/** Bookkeeping columns that are not charts. */
const NOT_CHARTED = new Set(['epoch', 'step', 'global_step', 'training/global_step', 'training/epoch']);

export function groupOf(metric: string): string {
  for (const g of METRIC_GROUPS) if (g.pattern.test(metric)) return g.group;
  return 'other';
}

const GROUP_ORDER = [...METRIC_GROUPS.map((g) => g.group), 'other'];

/** Every metric present in `rows` as a series (its points in step order), in group order then by name. */
export function seriesOf(rows: readonly MetricRow[]): Series[] {
  const byMetric = new Map<string, Point[]>();
  const sorted = [...rows].sort((a, b) => a.step - b.step);
  for (const r of sorted) {
    for (const [metric, value] of Object.entries(r.values)) {
      if (NOT_CHARTED.has(metric) || !Number.isFinite(value)) continue;
      let pts = byMetric.get(metric);
      if (!pts) byMetric.set(metric, (pts = []));
      pts.push({ step: r.step, value });
    }
  }
  return [...byMetric.entries()]
    .map(([metric, points]) => ({ metric, group: groupOf(metric), points }))
    .sort((a, b) => GROUP_ORDER.indexOf(a.group) - GROUP_ORDER.indexOf(b.group) || a.metric.localeCompare(b.metric));
}

export interface StepRange {
  from: number;
  to: number;
}

/** The points within [from, to] (inclusive). */
export function inRange(points: readonly Point[], range: StepRange | null): Point[] {
  if (!range) return [...points];
  return points.filter((p) => p.step >= range.from && p.step <= range.to);
}

/**
 * At most about `max` points: the steps split into equal buckets, each keeping its lowest and highest point (in step
 * order). The first and last points always stay.
 */
export function thin(points: readonly Point[], max: number): Point[] {
  if (points.length <= max || max < 4) return [...points];
  const buckets = Math.floor((max - 2) / 2);
  const first = points[0].step;
  const span = points[points.length - 1].step - first || 1;
  const out: Point[] = [points[0]];
  let i = 1;
  for (let b = 0; b < buckets; b++) {
    const hi = b === buckets - 1 ? Infinity : first + ((b + 1) * span) / buckets;
    let lo: Point | null = null;
    let top: Point | null = null;
    for (; i < points.length - 1 && points[i].step <= hi; i++) {
      const p = points[i];
      if (!lo || p.value < lo.value) lo = p;
      if (!top || p.value > top.value) top = p;
    }
    if (!lo || !top) continue;
    if (lo === top) out.push(lo);
    else out.push(...(lo.step <= top.step ? [lo, top] : [top, lo]));
  }
  out.push(points[points.length - 1]);
  return out;
}

/** The step range of all series together, or null when there are no points. */
export function stepExtent(series: readonly Series[]): StepRange | null {
  let from = Infinity;
  let to = -Infinity;
  for (const s of series) {
    for (const p of s.points) {
      if (p.step < from) from = p.step;
      if (p.step > to) to = p.step;
    }
  }
  return from <= to ? { from, to } : null;
}

/**
 * The value range of the given point lists, padded so a line never touches the frame (a flat line sits mid-chart);
 * null when empty. The padding never crosses zero: a series that is never negative (a learning rate warming up from
 * 0, a clip fraction) gets no negative axis, one never positive no positive axis.
 */
export function valueExtent(lists: ReadonlyArray<readonly Point[]>): { min: number; max: number } | null {
  let min = Infinity;
  let max = -Infinity;
  for (const pts of lists) {
    for (const p of pts) {
      if (p.value < min) min = p.value;
      if (p.value > max) max = p.value;
    }
  }
  if (min > max) return null;
  const pad = min === max ? (Math.abs(min) > 0 ? Math.abs(min) * 0.1 : 1) : (max - min) * 0.05;
  const lo = min >= 0 ? Math.max(0, min - pad) : min - pad;
  const hi = max <= 0 && min < 0 ? Math.min(0, max + pad) : max + pad;
  return { min: lo, max: hi };
}

/** A zoom step: `factor` < 1 narrows the range around its middle, > 1 widens it; kept inside `extent`. */
export function zoomRange(range: StepRange, extent: StepRange, factor: number): StepRange {
  const mid = (range.from + range.to) / 2;
  const half = Math.max(((range.to - range.from) * factor) / 2, 0.5);
  return clampRange({ from: mid - half, to: mid + half }, extent);
}

/**
 * Zooms `range` by `factor` (below 1: in) keeping the step `at` where it is on the axis, as a mouse wheel over a chart
 * does in TensorBoard; kept inside `extent`.
 */
export function zoomAt(range: StepRange, extent: StepRange, factor: number, at: number): StepRange {
  const pivot = Math.min(Math.max(at, range.from), range.to);
  let from = pivot - (pivot - range.from) * factor;
  let to = pivot + (range.to - pivot) * factor;
  if (to - from < 1) [from, to] = [pivot - 0.5, pivot + 0.5];
  return clampRange({ from, to }, extent);
}

/** Moves the range by `fraction` of its width (negative: earlier steps), kept inside `extent`. */
export function panRange(range: StepRange, extent: StepRange, fraction: number): StepRange {
  const shift = (range.to - range.from) * fraction;
  const width = range.to - range.from;
  let from = range.from + shift;
  if (from < extent.from) from = extent.from;
  if (from + width > extent.to) from = Math.max(extent.from, extent.to - width);
  return { from, to: Math.min(extent.to, from + width) };
}

function clampRange(r: StepRange, extent: StepRange): StepRange {
  const from = Math.max(extent.from, r.from);
  const to = Math.min(extent.to, r.to);
  return from <= to ? { from, to } : { ...extent };
}

/** Short number text for axes and values: 3 significant digits, exponent form for very small or large. */
export function formatValue(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e5 || a < 1e-3) return v.toExponential(2);
  return String(Number(v.toPrecision(3)));
}
