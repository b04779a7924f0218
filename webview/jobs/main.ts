// The job panel: a training job as it runs. The host follows the job's folder and sends what changed; this app keeps
// the rows and draws a status header (state, target, engine, elapsed time, latest step), a chart per metric present
// (grouped: reward and its terms, accuracy, turns, lengths, entropy, KL, clipping, optimiser, loss, speed; another job
// overlaid dashed; one step range for all, picked by dragging, the range fields or the keyboard; one smoothing slider
// and log-axis switch for all), the stdout/stderr tail and the checkpoint list. Charts are chart.js
// (webview/shared/lineChart.ts, as Reward Diagnostics'); the shaping is src/core/training/metricSeries.ts.
import { connectHost } from '../shared/host';
import { button, dropdown, h, registerComponents, table } from '../shared/components';
import { destroyLineCharts, lineChart, type LineChartHandle, type LineSeries } from '../shared/lineChart';
import { canUseLog, smoothingWeight, MAX_SMOOTHING } from '../shared/chartMath';
import { renderLogView } from './logView';
import {
  JOBS_SHORTCUTS,
  type CheckpointInfo,
  type JobHeader,
  type JobsState,
  type LogStream,
  type MetricRow,
  type ToApp,
  type ToHost,
  type JobChoice,
} from '../../src/protocol/jobs';
import {
  formatValue,
  inRange,
  panRange,
  seriesOf,
  stepExtent,
  zoomRange,
  type Series,
  type StepRange,
} from '../../src/core/training/metricSeries';

registerComponents();
const host = connectHost<ToHost, ToApp, JobsState>();
const state: JobsState = host.state() ?? { jobId: '', overlayId: null, range: null, stream: 'stdout', help: false };

/** Not saved: the host sends it all again when the panel is shown. */
let job: JobHeader | null = null;
let overlayJob: JobHeader | null = null;
let others: JobChoice[] = [];
const rows = { main: new Map<number, Record<string, number>>(), overlay: new Map<number, Record<string, number>>() };
const logs: Record<LogStream, string[]> = { stdout: [], stderr: [] };
let checkpoints: CheckpointInfo[] = [];
let error: string | null = null;
const MAX_LOG_LINES = 500;
const MAX_POINTS = 240;

const STYLE =
  `
.j-head { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: baseline; }
.j-head h1 { font-size: 1.3em; margin: 8px 0 2px; }
.j-facts { display: flex; flex-wrap: wrap; gap: 2px 14px; margin: 2px 0 6px; }
.j-facts span b { font-weight: 600; margin-right: 4px; color: var(--vscode-descriptionForeground); }
.j-status { padding: 0 6px; border-radius: 3px; border: 1px solid currentColor; }
.j-running { color: var(--vscode-charts-blue, #3794ff); }
.j-succeeded { color: var(--vscode-testing-iconPassed, #3a3); }
.j-failed, .j-lost { color: var(--vscode-errorForeground, #f14c4c); }
.j-cancelled, .j-staged { color: var(--vscode-descriptionForeground); }
.j-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 8px; }
.j-chart { margin: 0; border: 1px solid var(--vscode-panel-border, #8884); border-radius: 4px; padding: 4px 6px; }
.j-chart:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
.j-chart h3 { display: flex; justify-content: space-between; font-size: 0.95em; margin: 0 0 2px; font-weight: 600; }
.j-chart h3 span { font-weight: normal; font-variant-numeric: tabular-nums; }
.j-group { grid-column: 1 / -1; margin: 8px 0 0; font-size: 0.9em; text-transform: uppercase; ` +
  `color: var(--vscode-descriptionForeground); }
.j-plot { height: 150px; touch-action: none; cursor: crosshair; }
.j-smoothing input { width: 8em; vertical-align: middle; }
.j-log { max-height: 260px; overflow: auto; margin: 4px 0; }
.j-range input { width: 7em; }
.j-legend-main { color: var(--vscode-charts-blue, #3794ff); }
.j-legend-overlay { color: var(--vscode-charts-orange, #d18616); }
`;
document.head.append(h('style', {}, STYLE));

const app = document.getElementById('app')!;
const headBox = h('header', { id: 'job-header' });
const helpBox = h('div', { class: 'q-card', id: 'help' });
const statusBox = h('div', { role: 'status', 'aria-live': 'polite', id: 'status', class: 'q-error' });
const controls = h('div', { class: 'q-row', id: 'controls' });
const chartsBox = h('section', { id: 'charts', 'aria-label': 'Metrics' });
const logBox = h('section', { id: 'log', 'aria-label': 'Log tail' });
const ckptBox = h('section', { id: 'checkpoints', 'aria-label': 'Checkpoints' });
app.append(headBox, helpBox, statusBox, controls, chartsBox, logBox, ckptBox);

const persist = () => host.saveState(state);

function elapsed(j: JobHeader): string {
  if (!j.startedAt) return '–';
  const end = j.endedAt ? Date.parse(j.endedAt) : Date.now();
  const s = Math.max(0, Math.round((end - Date.parse(j.startedAt)) / 1000));
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  return hh > 0 ? `${hh} h ${mm} min` : mm > 0 ? `${mm} min ${ss} s` : `${ss} s`;
}

function fact(name: string, value: string | null, id?: string): HTMLElement | null {
  return value === null || value === '' ? null : h('span', { id }, h('b', {}, name), value);
}

function renderHeader(): void {
  if (!job) {
    headBox.replaceChildren(h('p', { class: 'q-muted' }, 'Reading the job…'));
    return;
  }
  const j = job;
  const running = j.status === 'running';
  headBox.replaceChildren(
    h(
      'div',
      { class: 'j-head' },
      h('h1', {}, j.name),
      h('span', { class: `j-status j-${j.status}`, id: 'job-status' }, j.status),
      h('span', { class: 'q-muted' }, j.id),
    ),
    h(
      'div',
      { class: 'j-facts' },
      fact('target', j.target),
      fact('engine', j.engine),
      fact('recipe', j.recipe),
      fact('model', j.model),
      fact('elapsed', elapsed(j), 'job-elapsed'),
      fact('step', j.latestStep === null ? '–' : String(j.latestStep), 'job-step'),
      fact('exit', j.exitCode === null ? null : String(j.exitCode)),
    ),
    j.reason && j.status !== 'cancelled' ? h('p', { class: 'q-error' }, j.reason) : '',
    h(
      'div',
      { class: 'q-row' },
      running ? button('Cancel job', () => host.post({ type: 'cancel' }), { appearance: 'secondary' }) : null,
      button('Open log', () => host.post({ type: 'openLogs', stream: state.stream }), { appearance: 'secondary' }),
      button('Open folder', () => host.post({ type: 'openFolder' }), { appearance: 'secondary' }),
      button(state.help ? 'Hide keys' : 'Keys', toggleHelp, { appearance: 'secondary', id: 'help-button' }),
    ),
    h('p', { class: 'q-muted' }, h('code', {}, j.command)),
  );
}

function toggleHelp(): void {
  state.help = !state.help;
  persist();
  renderHelp();
  renderHeader();
}

function renderHelp(): void {
  helpBox.hidden = !state.help;
  helpBox.replaceChildren(
    h('strong', {}, 'Keys'),
    table(
      ['key', 'does'],
      JOBS_SHORTCUTS.map((s) => [s.key, s.does]),
    ),
    h(
      'p',
      { class: 'q-muted' },
      'Drag across a chart to show only those steps, double-click for all steps again; every chart follows. ' +
        'Point at a line for its values. Smoothing and Log axis apply to every chart.',
    ),
  );
}

function rowsOf(which: 'main' | 'overlay'): MetricRow[] {
  return [...rows[which].entries()].map(([step, values]) => ({ step, values }));
}

function setRange(r: StepRange | null): void {
  state.range = r ? { from: Math.round(r.from * 100) / 100, to: Math.round(r.to * 100) / 100 } : null;
  persist();
  renderControls();
  renderCharts();
}

function renderControls(): void {
  const options = [{ value: '', label: 'No overlay' }, ...others.map((o) => ({ value: o.id, label: o.label }))];
  const picker = dropdown(
    options,
    state.overlayId ?? '',
    (v) => {
      state.overlayId = v === '' ? null : v;
      persist();
      host.post({ type: 'setOverlay', id: v });
    },
    'overlay-picker',
  );
  picker.setAttribute('aria-label', 'Overlay another job');
  const num = (id: string, label: string, value: number | undefined) => {
    const input = h('input', { type: 'number', id, 'aria-label': label, value: value === undefined ? '' : value });
    input.addEventListener('change', () => {
      const from = Number((document.getElementById('range-from') as HTMLInputElement).value);
      const to = Number((document.getElementById('range-to') as HTMLInputElement).value);
      const fromBlank = (document.getElementById('range-from') as HTMLInputElement).value === '';
      const toBlank = (document.getElementById('range-to') as HTMLInputElement).value === '';
      if (fromBlank && toBlank) setRange(null);
      else {
        const ext = extent();
        if (!ext) return;
        const a = fromBlank ? ext.from : from;
        const b = toBlank ? ext.to : to;
        if (Number.isFinite(a) && Number.isFinite(b) && a <= b) setRange({ from: a, to: b });
      }
    });
    return input;
  };
  // TensorBoard's smoothing slider and a log value axis, for every chart.
  const weight = smoothingWeight(state.smoothing);
  const slider = h('input', {
    type: 'range',
    id: 'smoothing',
    min: 0,
    max: MAX_SMOOTHING,
    step: 0.01,
    value: weight,
    'aria-label': 'Smoothing',
  }) as HTMLInputElement;
  const shown = h('span', { id: 'smoothing-value', class: 'q-muted' }, weight.toFixed(2));
  slider.addEventListener('input', () => {
    state.smoothing = smoothingWeight(Number(slider.value));
    shown.textContent = state.smoothing.toFixed(2);
    persist();
    renderCharts();
  });
  const log = h('input', { type: 'checkbox', id: 'log-scale', checked: state.logScale === true }) as HTMLInputElement;
  log.addEventListener('change', () => {
    state.logScale = log.checked;
    persist();
    renderCharts();
  });
  controls.replaceChildren(
    h('label', { for: 'overlay-picker' }, 'Overlay'),
    picker,
    h('span', { class: 'j-smoothing q-row' }, h('label', { for: 'smoothing' }, 'Smoothing'), slider, shown),
    h(
      'span',
      { class: 'q-row', title: 'A log value axis (on charts whose values are all above 0)' },
      log,
      h('label', { for: 'log-scale' }, 'Log axis'),
    ),
    h(
      'span',
      { class: 'j-range q-row' },
      h('label', { for: 'range-from' }, 'Steps'),
      num('range-from', 'first step shown', state.range?.from),
      h('span', {}, '–'),
      num('range-to', 'last step shown', state.range?.to),
      button('All steps', () => setRange(null), { appearance: 'secondary', id: 'range-reset' }),
    ),
    overlayJob
      ? h(
          'span',
          {},
          h('span', { class: 'j-legend-main' }, `— ${job?.name ?? 'this job'}`),
          ' ',
          h('span', { class: 'j-legend-overlay' }, `- - ${overlayJob.name}`),
        )
      : '',
  );
}

function extent(): StepRange | null {
  return stepExtent([...seriesOf(rowsOf('main')), ...seriesOf(rowsOf('overlay'))]);
}

function chartKeys(e: KeyboardEvent): void {
  const ext = extent();
  if (!ext) return;
  const cur = state.range ?? ext;
  const keys: Record<string, () => StepRange | null> = {
    '+': () => zoomRange(cur, ext, 0.5),
    '=': () => zoomRange(cur, ext, 0.5),
    '-': () => zoomRange(cur, ext, 2),
    ArrowLeft: () => panRange(cur, ext, -0.25),
    ArrowRight: () => panRange(cur, ext, 0.25),
  };
  const f = keys[e.key];
  if (!f) return;
  e.preventDefault();
  setRange(f());
}

/** The charts on the page: which metrics, and each one's card, value and chart (to redraw in place). */
let drawn: {
  key: string;
  grid: HTMLElement;
  charts: Map<string, { card: HTMLElement; value: HTMLElement; chart: LineChartHandle }>;
} | null = null;

function renderCharts(): void {
  const main = seriesOf(rowsOf('main'));
  const over = new Map(seriesOf(rowsOf('overlay')).map((s) => [s.metric, s]));
  const all: Series[] = [...main, ...[...over.values()].filter((s) => !main.some((m) => m.metric === s.metric))];
  const ext = extent();
  if (all.length === 0 || !ext) {
    destroyLineCharts();
    drawn = null;
    chartsBox.replaceChildren(
      h('h2', {}, 'Metrics'),
      h(
        'p',
        { class: 'q-muted', id: 'no-metrics' },
        job?.metricsFiles.length
          ? `No metrics yet. Following ${job.metricsFiles.map((f) => f.file).join(', ')}.`
          : 'No metrics yet.',
      ),
    );
    return;
  }
  const range = state.range ?? ext;
  const smoothing = smoothingWeight(state.smoothing);
  const views = all.map((s) => {
    const mainPts = inRange(main.find((m) => m.metric === s.metric)?.points ?? [], range);
    const overPts = inRange(over.get(s.metric)?.points ?? [], range);
    const last = mainPts[mainPts.length - 1] ?? overPts[overPts.length - 1];
    const lines: LineSeries[] = [{ label: job?.name ?? 'this job', points: mainPts }];
    if (overPts.length) lines.push({ label: overlayJob?.name ?? 'overlay', points: overPts, dashed: true });
    const log = state.logScale === true && canUseLog([mainPts, overPts]);
    const label =
      `${s.metric}: ${mainPts.length} points, steps ${formatValue(range.from)} to ${formatValue(range.to)}` +
      (last ? `, last ${formatValue(last.value)} at step ${last.step}` : '') +
      (overPts.length ? `; overlay ${overPts.length} points` : '');
    const spec = { series: lines, range, smoothing, log, maxPoints: MAX_POINTS, onPick: setRange };
    return { s, spec, label, lastText: last ? formatValue(last.value) : '' };
  });
  // The same charts as before (new rows of a running job): redrawn in place, so a tooltip or a drag in progress stays.
  const key = all.map((s) => s.metric).join('\n');
  if (drawn && drawn.key === key && chartsBox.contains(drawn.grid)) {
    for (const v of views) {
      const d = drawn.charts.get(v.s.metric);
      if (!d) continue;
      d.card.setAttribute('aria-label', v.label);
      d.card.dataset.scale = v.spec.log ? 'log' : 'linear';
      d.value.textContent = v.lastText;
      d.chart.update(v.spec);
    }
    return;
  }
  // One grid; each group's heading spans a whole row, its charts flow after it.
  const grid = h('div', { class: 'j-grid' });
  const cards: Array<{ metric: string; card: HTMLElement; value: HTMLElement; holder: HTMLElement }> = [];
  let group = '';
  for (const v of views) {
    if (v.s.group !== group) {
      group = v.s.group;
      grid.append(h('h3', { class: 'j-group' }, group));
    }
    const holder = h('div', { class: 'j-plot' });
    const value = h('span', {}, v.lastText);
    const card = h(
      'figure',
      {
        class: 'j-chart',
        tabindex: 0,
        'data-metric': v.s.metric,
        'data-scale': v.spec.log ? 'log' : 'linear',
        role: 'img',
        'aria-label': v.label,
      },
      h('h3', {}, v.s.metric, value),
      holder,
    );
    card.addEventListener('keydown', chartKeys);
    grid.append(card);
    cards.push({ metric: v.s.metric, card, value, holder });
  }
  destroyLineCharts();
  // The chart that had the keyboard keeps it.
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.metric;
  chartsBox.replaceChildren(h('h2', {}, `Metrics (${all.length})`), grid);
  // Drawn once their holders are in the page (chart.js sizes a canvas by its holder).
  drawn = { key, grid, charts: new Map() };
  views.forEach((v, k) => {
    const c = cards[k];
    drawn?.charts.set(c.metric, { card: c.card, value: c.value, chart: lineChart(c.holder, v.spec) });
  });
  if (focused) (grid.querySelector(`[data-metric="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
}

function renderLog(): void {
  renderLogView(logBox, logs);
}

function renderCheckpoints(): void {
  if (checkpoints.length === 0) {
    ckptBox.replaceChildren(h('h2', {}, 'Checkpoints'), h('p', { class: 'q-muted' }, 'None yet.'));
    return;
  }
  const t = h('table', { class: 'q-table', id: 'checkpoint-table' });
  t.append(
    h('thead', {}, h('tr', {}, ...['step', 'checkpoint', 'engine', 'loads as is', ''].map((c) => h('th', {}, c)))),
  );
  const body = h('tbody');
  for (const c of checkpoints) {
    body.append(
      h(
        'tr',
        {},
        h('td', {}, String(c.step)),
        h('td', { title: c.path }, c.name),
        h('td', {}, c.engine),
        h('td', {}, c.loadable ? 'yes' : (c.note ?? 'no')),
        h(
          'td',
          {},
          button('Reveal', () => host.post({ type: 'revealCheckpoint', path: c.path }), { appearance: 'secondary' }),
          c.loadable ? button('Load…', () => host.post({ type: 'loadCheckpoint', path: c.path })) : null,
        ),
      ),
    );
  }
  t.append(body);
  ckptBox.replaceChildren(h('h2', {}, `Checkpoints (${checkpoints.length})`), t);
}

function take(which: 'main' | 'overlay', list: MetricRow[], reset: boolean): void {
  if (reset) rows[which].clear();
  for (const r of list) rows[which].set(r.step, r.values);
}

function appendLog(stream: LogStream, text: string, reset: boolean): void {
  const lines = logs[stream];
  if (reset) lines.length = 0;
  if (text === '') return;
  const parts = text.split('\n');
  // A line the last read ended in the middle of continues here.
  if (!reset && lines.length > 0 && partial[stream]) lines[lines.length - 1] += parts.shift();
  partial[stream] = !text.endsWith('\n');
  if (!partial[stream]) parts.pop();
  lines.push(...parts);
  if (lines.length > MAX_LOG_LINES) lines.splice(0, lines.length - MAX_LOG_LINES);
}
const partial: Record<LogStream, boolean> = { stdout: false, stderr: false };

host.onMessage((msg) => {
  switch (msg.type) {
    case 'job':
      job = msg.job;
      others = msg.others;
      if (state.jobId !== msg.job.id) {
        state.jobId = msg.job.id;
        persist();
      }
      renderHeader();
      renderControls();
      return;
    case 'metrics':
      take(msg.which, msg.rows, msg.reset);
      renderCharts();
      return;
    case 'overlay':
      overlayJob = msg.job;
      if (!msg.job) rows.overlay.clear();
      state.overlayId = msg.job?.id ?? null;
      persist();
      renderControls();
      renderCharts();
      return;
    case 'log':
      appendLog(msg.stream, msg.text, msg.reset);
      renderLog();
      return;
    case 'checkpoints':
      checkpoints = msg.checkpoints;
      renderCheckpoints();
      return;
    case 'error':
      error = msg.text;
      statusBox.textContent = error;
      return;
  }
});

window.addEventListener('keydown', (e) => {
  const t = e.target as HTMLElement | null;
  if (t && (t.tagName === 'INPUT' || t.closest('vscode-dropdown'))) return;
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === '?') toggleHelp();
  else if (e.key === '0') setRange(null);
  else if (e.key === 'l') document.getElementById('log-tail')?.focus();
  else if (e.key === 'o') document.getElementById('overlay-picker')?.focus();
  else return;
  e.preventDefault();
});

// The elapsed time moves on while the job runs.
setInterval(() => {
  if (job?.status === 'running') {
    const el = document.getElementById('job-elapsed');
    if (el) el.lastChild!.textContent = elapsed(job);
  }
}, 1000);

renderHeader();
renderHelp();
renderControls();
renderCharts();
renderLog();
renderCheckpoints();
host.post({ type: 'ready' });
