// The arithmetic behind Quarry's line charts (the job panel's metrics), apart from chart.js and the DOM so unit tests
// check it: TensorBoard's smoothing (a debiased exponential moving average), when a log axis can be offered, the step
// range a drag across the plot picks, the y axis a chart asks chart.js for, and tick text.
import { formatValue, valueExtent, type Point, type StepRange } from '../../src/core/training/metricSeries';

/** The smoothing slider's range: 0 draws the raw points, 0.99 nearly a flat line (as TensorBoard's slider). */
export const MAX_SMOOTHING = 0.99;

/** A smoothing weight from a slider or saved state: a number in [0, MAX_SMOOTHING], anything else 0. */
export function smoothingWeight(raw: unknown): number {
  const w = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isFinite(w) || w <= 0) return 0;
  return Math.min(w, MAX_SMOOTHING);
}

/**
 * TensorBoard's smoothing: an exponential moving average, debiased so the first points are not pulled towards 0
 * (each value divided by 1 − weightⁿ). Weight 0 gives the points back unchanged; the steps stay as they are.
 */
export function smoothEma(points: readonly Point[], weight: number): Point[] {
  const w = smoothingWeight(weight);
  if (w === 0) return points.map((p) => ({ ...p }));
  let last = 0;
  let n = 0;
  return points.map((p) => {
    n++;
    last = last * w + (1 - w) * p.value;
    return { step: p.step, value: last / (1 - w ** n) };
  });
}

/** A log axis shows only positive values: offered when every point of every series is above 0. */
export function canUseLog(lists: ReadonlyArray<readonly Point[]>): boolean {
  let any = false;
  for (const pts of lists) {
    for (const p of pts) {
      if (!(p.value > 0)) return false;
      any = true;
    }
  }
  return any;
}

/**
 * The steps a drag across the plot picked: `a` and `b` are the pointer's x (in pixels, either order) and `left`/`right`
 * the plot area's edges, mapped onto `range`. Null for a drag narrower than `minPixels` (a click, not a zoom).
 */
export function dragToRange(
  a: number,
  b: number,
  plot: { left: number; right: number },
  range: StepRange,
  minPixels = 4,
): StepRange | null {
  const width = plot.right - plot.left;
  if (width <= 0) return null;
  const clamp = (x: number) => Math.min(Math.max(x, plot.left), plot.right);
  const [lo, hi] = [clamp(Math.min(a, b)), clamp(Math.max(a, b))];
  if (hi - lo < minPixels) return null;
  const at = (x: number) => range.from + ((x - plot.left) / width) * (range.to - range.from);
  const from = Math.floor(at(lo));
  const to = Math.ceil(at(hi));
  return to > from ? { from, to } : null;
}

/** The y axis a chart asks for: log (left to chart.js), or linear bounded by the data (never padded across 0). */
export function yAxisBounds(
  lists: ReadonlyArray<readonly Point[]>,
  log: boolean,
): { type: 'logarithmic' | 'linear'; suggestedMin?: number; suggestedMax?: number } {
  const v = valueExtent(lists);
  if (log && v && canUseLog(lists)) {
    // The data's own range; a flat line gets a factor of 2 either side (a log axis cannot pad by adding).
    let lo = Infinity;
    let hi = -Infinity;
    for (const p of lists.flat()) [lo, hi] = [Math.min(lo, p.value), Math.max(hi, p.value)];
    return lo === hi
      ? { type: 'logarithmic', suggestedMin: lo / 2, suggestedMax: hi * 2 }
      : { type: 'logarithmic', suggestedMin: lo, suggestedMax: hi };
  }
  return v ? { type: 'linear', suggestedMin: v.min, suggestedMax: v.max } : { type: 'linear' };
}

/** On a log axis only 1, 2 and 5 times a power of ten get a label (chart.js offers every 1–9 and they collide). */
export function logTickShown(v: number): boolean {
  if (!(v > 0)) return false;
  const mantissa = Number((v / 10 ** Math.floor(Math.log10(v) + 1e-9)).toPrecision(3));
  return mantissa === 1 || mantissa === 2 || mantissa === 5;
}

/**
 * Which of a log axis's ticks get a label: the 1, 2 and 5 ones when there are at least two of them, else (an axis
 * spanning less than a decade) the lowest and the highest tick, so some values are always named.
 */
export function logTicksLabelled(values: readonly number[]): boolean[] {
  const shown = values.map(logTickShown);
  if (shown.filter(Boolean).length >= 2) return shown;
  return values.map((_, i) => i === 0 || i === values.length - 1);
}

/** Tick and tooltip text: 3 significant digits, exponent form for very small or large values. */
export function tickText(v: number): string {
  return formatValue(v);
}
