// The diagnostics panel's charts, all drawn by chart.js (tree-shaken to the bar chart it needs), the library the job
// panel's line charts use too (webview/shared/lineChart.ts). Colours are VS Code theme variables read when a chart is
// drawn (webview/shared/chartTheme.ts), so a theme change only needs a redraw.
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  Tooltip,
  type ChartDataset,
} from 'chart.js';
import type { Histogram } from '../../src/core/rewards/report';
import { theme } from '../shared/chartTheme';

export { theme };

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

interface BarSpec {
  labels: string[];
  datasets: Array<{ label: string; data: number[]; color: string | string[] }>;
  /** Series stack on one another (positive above zero, negative below). */
  stacked?: boolean;
  /** Bars run left to right. */
  horizontal?: boolean;
  xTitle?: string;
  yTitle?: string;
  legend?: boolean;
  /** Fixed value-axis range (e.g. 0..1 for accuracies). */
  min?: number;
  max?: number;
  /** Accessible description of the chart (the canvas's aria-label). */
  describe: string;
  /** Formats values in tooltips. */
  format?: (v: number) => string;
  /** The values are counts: whole-number ticks only. */
  counts?: boolean;
}

const charts = new Set<Chart>();

/** Destroys every chart (before the view is redrawn). */
export function destroyCharts(): void {
  for (const c of charts) c.destroy();
  charts.clear();
}

/** A bar chart in a new canvas inside `holder` (which sets the size). */
export function barChart(holder: HTMLElement, spec: BarSpec): Chart {
  const t = theme();
  const canvas = document.createElement('canvas');
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', spec.describe);
  holder.append(canvas);
  const valueAxis = spec.horizontal ? 'x' : 'y';
  const datasets: ChartDataset<'bar', number[]>[] = spec.datasets.map((d) => ({
    label: d.label,
    data: d.data,
    backgroundColor: d.color,
    borderColor: d.color,
    borderWidth: 1,
    ...(spec.stacked ? { stack: 'all' } : {}),
  }));
  const axis = (title: string | undefined, isValue: boolean) => ({
    stacked: spec.stacked ?? false,
    ticks: { color: t.muted, font: { family: t.font }, ...(isValue && spec.counts ? { precision: 0 } : {}) },
    grid: { color: t.grid, display: isValue },
    border: { color: t.grid },
    title: { display: title !== undefined, text: title ?? '', color: t.muted, font: { family: t.font } },
    ...(isValue && spec.min !== undefined ? { min: spec.min } : {}),
    ...(isValue && spec.max !== undefined ? { max: spec.max } : {}),
  });
  const fmt = spec.format ?? ((v: number) => String(Math.round(v * 1000) / 1000));
  const chart = new Chart(canvas, {
    type: 'bar',
    data: { labels: spec.labels, datasets },
    options: {
      // Drawn at once: the panel redraws on every message and screenshots must show the final state.
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      indexAxis: spec.horizontal ? 'y' : 'x',
      scales: {
        x: axis(spec.xTitle, valueAxis === 'x'),
        y: axis(spec.yTitle, valueAxis === 'y'),
      },
      plugins: {
        legend: {
          display: spec.legend ?? false,
          labels: { color: t.foreground, font: { family: t.font }, boxWidth: 12 },
        },
        tooltip: {
          callbacks: {
            label: (ctx) =>
              `${ctx.dataset.label ? `${ctx.dataset.label}: ` : ''}${fmt(ctx.parsed[valueAxis] as number)}`,
          },
        },
      },
    },
  });
  charts.add(chart);
  return chart;
}

function edge(x: number): string {
  if (Number.isInteger(x)) return String(x);
  const digits = Math.abs(x) < 10 ? 2 : 1;
  const rounded = Number(x.toFixed(digits));
  // -1e-17 would read "-0.00".
  return (rounded === 0 ? 0 : rounded).toFixed(digits);
}

/** Bin labels: "3" for integer bins, "0.25–0.50" for ranges. */
function binLabels(h: Histogram): string[] {
  return h.bins.map((b) => (edge(b.lo) === edge(b.hi) ? edge(b.lo) : `${edge(b.lo)}–${edge(b.hi)}`));
}

export function histogramChart(
  holder: HTMLElement,
  h: Histogram,
  opts: { title: string; xTitle: string; color?: string },
): Chart {
  return barChart(holder, {
    labels: binLabels(h),
    datasets: [{ label: 'trajectories', data: h.bins.map((b) => b.count), color: opts.color ?? theme().palette[0] }],
    xTitle: opts.xTitle,
    yTitle: 'count',
    counts: true,
    describe: `${opts.title}: ${h.bins.map((b, i) => `${binLabels(h)[i]}: ${b.count}`).join(', ')}`,
    format: (v) => String(v),
  });
}
