// A metric's line chart by step, drawn by chart.js (the library Reward Diagnostics' charts use too), with what people
// used to W&B or TensorBoard expect: step and value ticks, the values under the pointer in a tooltip, smoothing (the
// raw line faint behind the smoothed one), a log axis, zoom by dragging across the plot or with the wheel around the
// pointer (double-click: every step), and other series overlaid (dashed). The arithmetic is chartMath.ts; colours
// come from the VS Code theme.
import {
  Chart,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Tooltip,
  type ChartDataset,
} from 'chart.js';
import { thin, zoomAt, type Point, type StepRange } from '../../src/core/training/metricSeries';
import { dragToRange, logTicksLabelled, smoothEma, tickText, yAxisBounds } from './chartMath';
import { theme } from './chartTheme';

Chart.register(LineController, LineElement, PointElement, LinearScale, LogarithmicScale, Tooltip);

export interface LineSeries {
  label: string;
  points: Point[];
  /** Drawn dashed (an overlaid job). */
  dashed?: boolean;
}

interface LineChartSpec {
  series: LineSeries[];
  /** The steps the x axis spans. */
  range: StepRange;
  /** 0 (raw) to 0.99: TensorBoard's smoothing weight. */
  smoothing: number;
  /** A log value axis (used only when every value is above 0). */
  log: boolean;
  /** At most about this many points drawn per line (thinned keeping spikes); smoothing runs on every point first. */
  maxPoints: number;
  /** Called with the steps dragged across, or null (double-click) for every step. */
  onPick: (range: StepRange | null) => void;
}

const charts = new Set<Chart>();

/** Destroys every line chart (before the charts are drawn again). */
export function destroyLineCharts(): void {
  for (const c of charts) c.destroy();
  charts.clear();
}

function faded(color: string): string {
  // #rrggbb → #rrggbb55; anything else (rgb(), names) is drawn as is, thinner.
  return /^#[0-9a-f]{6}$/i.test(color) ? `${color}55` : color;
}

type Datasets = ChartDataset<'line', { x: number; y: number }[]>[];

/** The lines a spec draws: each series (thinned), and with smoothing its raw points faint behind the smoothed ones. */
function datasetsOf(spec: LineChartSpec, palette: string[]): Datasets {
  const datasets: Datasets = [];
  spec.series.forEach((s, i) => {
    const color = palette[i % palette.length];
    const xy = (pts: readonly Point[]) => thin(pts, spec.maxPoints).map((p) => ({ x: p.step, y: p.value }));
    const smoothed = spec.smoothing > 0;
    const common = { borderDash: s.dashed ? [5, 3] : [], pointRadius: 0, pointHoverRadius: 3, tension: 0 };
    if (smoothed) {
      const raw = faded(color);
      datasets.push({ ...common, label: `${s.label} (raw)`, data: xy(s.points), borderColor: raw, borderWidth: 1 });
    }
    datasets.push({
      ...common,
      label: smoothed ? `${s.label} (smoothed)` : s.label,
      data: xy(smoothed ? smoothEma(s.points, spec.smoothing) : s.points),
      borderColor: color,
      backgroundColor: color,
      borderWidth: 1.5,
    });
  });
  return datasets;
}

/** A drawn chart; `update` redraws it in place with new points or settings (the pointer's tooltip stays). */
export interface LineChartHandle {
  update(spec: LineChartSpec): void;
}

/**
 * A line chart in a new canvas inside `holder` (which sets the size). The canvas's `data-points` holds how many points
 * the first series draws, `data-last-step` the step of its last one, `data-lines` the lines drawn and `data-y-min` the
 * value axis's lowest value (for tests).
 */
export function lineChart(holder: HTMLElement, first: LineChartSpec): LineChartHandle {
  const t = theme();
  let spec = first;
  const canvas = document.createElement('canvas');
  canvas.setAttribute('aria-hidden', 'true');
  const band = document.createElement('div');
  band.className = 'q-chart-band';
  band.hidden = true;
  // The values under the pointer, also in words (the tooltip is drawn on the canvas, which screen readers skip).
  const readout = document.createElement('div');
  readout.className = 'q-chart-readout q-muted';
  readout.setAttribute('aria-live', 'polite');
  holder.style.position = 'relative';
  holder.append(canvas, band);
  holder.after(readout);

  const axis = (log: boolean) => ({
    ticks: {
      color: t.muted,
      font: { family: t.font, size: 10 },
      maxTicksLimit: 6,
      // A log axis's labels are picked here (1, 2, 5 × 10ⁿ); chart.js's own skipping would drop some of those too.
      autoSkip: !log,
      callback: (v: unknown, i: number, ticks: Array<{ value: number }>) =>
        typeof v !== 'number' ? String(v) : log && !logTicksLabelled(ticks.map((k) => k.value))[i] ? '' : tickText(v),
    },
    grid: { color: t.grid },
    border: { color: t.grid },
  });
  const scalesOf = (sp: LineChartSpec) => {
    const y = yAxisBounds(
      sp.series.map((s) => s.points),
      sp.log,
    );
    return {
      x: { ...axis(false), type: 'linear' as const, min: sp.range.from, max: sp.range.to },
      y: { ...axis(y.type === 'logarithmic'), ...y },
    };
  };
  const chart = new Chart(canvas, {
    type: 'line',
    data: { datasets: datasetsOf(spec, t.palette) },
    options: {
      // Drawn at once: new rows redraw the charts, and screenshots must show the final state.
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      onHover: (_e, items, c) => {
        const at = items[0];
        if (!at) return;
        const point = (it: { datasetIndex: number; index: number }) =>
          c.data.datasets[it.datasetIndex]?.data[it.index] as { x: number; y: number } | undefined;
        const values = items.map((it) => `${c.data.datasets[it.datasetIndex]?.label}: ${tickText(point(it)?.y ?? 0)}`);
        const step = point(at)?.x;
        readout.textContent = step === undefined ? '' : `step ${tickText(step)}: ${values.join(', ')}`;
      },
      scales: scalesOf(spec),
      plugins: {
        tooltip: {
          callbacks: {
            title: (items) => (items[0] ? `step ${tickText(items[0].parsed.x ?? 0)}` : ''),
            label: (ctx) => `${ctx.dataset.label ?? ''}: ${tickText(ctx.parsed.y ?? 0)}`,
          },
        },
      },
    },
  });
  charts.add(chart);
  const describe = () => {
    const pts = thin(spec.series[0]?.points ?? [], spec.maxPoints);
    canvas.dataset.points = String(pts.length);
    canvas.dataset.lastStep = String(pts.at(-1)?.step ?? '');
    canvas.dataset.lines = String(chart.data.datasets.length);
    canvas.dataset.yMin = String(chart.scales.y?.min ?? '');
  };
  describe();

  // Drag across the plot: those steps, on every chart. Double-click: every step again.
  let start: number | null = null;
  const xIn = (e: MouseEvent) => e.clientX - canvas.getBoundingClientRect().left;
  canvas.addEventListener('pointerdown', (e) => {
    start = xIn(e);
    canvas.setPointerCapture(e.pointerId);
  });
  canvas.addEventListener('pointermove', (e) => {
    if (start === null) return;
    const area = chart.chartArea;
    const [a, b] = [start, xIn(e)].map((x) => Math.min(Math.max(x, area.left), area.right)).sort((p, q) => p - q);
    Object.assign(band.style, { left: `${a}px`, width: `${b - a}px`, top: `${area.top}px` });
    band.style.height = `${area.height}px`;
    band.hidden = b - a < 2;
  });
  canvas.addEventListener('pointerup', (e) => {
    if (start === null) return;
    const picked = dragToRange(start, xIn(e), chart.chartArea, spec.range);
    start = null;
    band.hidden = true;
    if (picked) spec.onPick(picked);
  });
  canvas.addEventListener('dblclick', () => spec.onPick(null));
  // The wheel over the plot: in or out around the step under the pointer (the other charts follow, as with a drag).
  canvas.addEventListener(
    'wheel',
    (e) => {
      const x = chart.scales.x;
      const steps = spec.series.flatMap((s) => [s.points[0]?.step, s.points.at(-1)?.step]);
      const known = steps.filter((v): v is number => v !== undefined);
      if (!x || !known.length || e.deltaY === 0) return;
      e.preventDefault();
      const extent = { from: Math.min(...known), to: Math.max(...known) };
      const at = x.getValueForPixel(xIn(e)) ?? (spec.range.from + spec.range.to) / 2;
      spec.onPick(zoomAt(spec.range, extent, e.deltaY < 0 ? 0.8 : 1.25, at));
    },
    { passive: false },
  );

  return {
    update(next) {
      spec = next;
      chart.data.datasets = datasetsOf(spec, t.palette);
      chart.options.scales = scalesOf(spec);
      chart.update('none');
      describe();
    },
  };
}
