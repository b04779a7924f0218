// One metric's line chart as SVG, drawn by hand (no chart library): the job's points as a solid line, the overlaid
// job's as a dashed one, min/max value and first/last step labels, a dot on the latest point, and a drag across the
// plot to pick a step range. The numbers come already shaped (src/core/training/metricSeries.ts).
import { formatValue, valueExtent, type Point, type StepRange } from '../../src/core/training/metricSeries';

const SVG = 'http://www.w3.org/2000/svg';
const W = 320;
const H = 130;
const PAD = { left: 46, right: 8, top: 8, bottom: 18 };

function el(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

export interface ChartInput {
  metric: string;
  main: Point[];
  overlay: Point[];
  /** The steps the x axis spans. */
  range: StepRange;
  /** Called with a step range the user dragged across. */
  onPick: (range: StepRange) => void;
}

/**
 * The chart's SVG; `data-points` holds how many of the job's points it draws (thinned past a few hundred) and
 * `data-last-step` the step of the last one.
 */
export function lineChart(input: ChartInput): SVGSVGElement {
  const svg = el('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'j-svg',
    'data-points': input.main.length,
    'data-last-step': input.main.at(-1)?.step ?? '',
  }) as SVGSVGElement;
  svg.setAttribute('aria-hidden', 'true');
  const y = valueExtent([input.main, input.overlay]);
  const { from, to } = input.range;
  const span = to - from || 1;
  const px = (step: number) => PAD.left + ((step - from) / span) * (W - PAD.left - PAD.right);
  const py = (v: number) => (y ? H - PAD.bottom - ((v - y.min) / (y.max - y.min)) * (H - PAD.top - PAD.bottom) : 0);
  svg.append(
    el('line', { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, class: 'j-axis' }),
    el('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, class: 'j-axis' }),
  );
  const label = (x: number, yy: number, text: string, anchor: string) => {
    const t = el('text', { x, y: yy, 'text-anchor': anchor, class: 'j-tick' });
    t.textContent = text;
    svg.append(t);
  };
  if (y) {
    label(PAD.left - 4, PAD.top + 8, formatValue(y.max), 'end');
    label(PAD.left - 4, H - PAD.bottom, formatValue(y.min), 'end');
  }
  label(PAD.left, H - 4, formatValue(from), 'start');
  label(W - PAD.right, H - 4, formatValue(to), 'end');
  const path = (pts: Point[], cls: string) => {
    if (pts.length === 0) return;
    const d = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${px(p.step).toFixed(1)},${py(p.value).toFixed(1)}`).join('');
    svg.append(el('path', { d, class: cls }));
  };
  path(input.overlay, 'j-line j-overlay');
  path(input.main, 'j-line j-main');
  const last = input.main[input.main.length - 1];
  if (last) svg.append(el('circle', { cx: px(last.step), cy: py(last.value), r: 2.5, class: 'j-dot' }));
  // Drag across the plot: a step range.
  const band = el('rect', { y: PAD.top, height: H - PAD.top - PAD.bottom, width: 0, class: 'j-band' });
  band.setAttribute('visibility', 'hidden');
  svg.append(band);
  const stepAt = (clientX: number) => {
    const box = svg.getBoundingClientRect();
    const x = ((clientX - box.left) / (box.width || 1)) * W;
    return from + ((Math.min(Math.max(x, PAD.left), W - PAD.right) - PAD.left) / (W - PAD.left - PAD.right)) * span;
  };
  let start: number | null = null;
  svg.addEventListener('pointerdown', (e) => {
    start = stepAt(e.clientX);
    svg.setPointerCapture(e.pointerId);
  });
  svg.addEventListener('pointermove', (e) => {
    if (start === null) return;
    const a = px(Math.min(start, stepAt(e.clientX)));
    const b = px(Math.max(start, stepAt(e.clientX)));
    band.setAttribute('x', String(a));
    band.setAttribute('width', String(b - a));
    band.setAttribute('visibility', 'visible');
  });
  svg.addEventListener('pointerup', (e) => {
    if (start === null) return;
    const end = stepAt(e.clientX);
    const [a, b] = start < end ? [start, end] : [end, start];
    start = null;
    band.setAttribute('visibility', 'hidden');
    if (b - a >= span / 100) input.onPick({ from: Math.floor(a), to: Math.ceil(b) });
  });
  return svg;
}
