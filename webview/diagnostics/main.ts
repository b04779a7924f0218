// The reward diagnostics panel. The host scores (core reward engine) and sends plain data; this app draws it: a run
// (histograms, EX by hardness, term contributions, integrity flags linking to their items, group statistics,
// Progress-SQL's Table 8 ODT mismatch rates, the trajectory list) or one trajectory (stacked term bar with
// explanations, ODT trees side by side, clause F1, verification verdicts). Charts are chart.js (charts.ts); the trees
// and tables are plain DOM.
import { connectHost } from '../shared/host';
import { button, dropdown, h, progressRing, registerComponents, table, textField } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import { barChart, destroyCharts, histogramChart, theme } from './charts';
import { nothingScored } from './emptyRun';
import {
  MISMATCH_SQL_CHOICES,
  SHORTCUTS,
  type DiagnosticsState,
  type MismatchReport,
  type MismatchScope,
  type RunDiagnostics,
  type ToApp,
  type ToHost,
  type TrajectoryDiagnostics,
} from '../../src/protocol/diagnostics';
import type { OdtView, OdtViewNode } from '../../src/core/rewards/odtView';
import type { RunItem } from '../../src/core/rewards/report';
import type { IntegrityFlag } from '../../src/core/rewards/integrity';

registerComponents();
const host = connectHost<ToHost, ToApp, DiagnosticsState>();
const state: DiagnosticsState = host.state() ?? {
  panels: [],
  selected: 'sqltrail',
  source: null,
  run: null,
  trajectory: null,
  view: 'empty',
  hasRun: false,
  filter: '',
  help: false,
};
/** Transient: what the host is doing, or what went wrong (not saved: a restored panel asks the host again). */
let status: { kind: 'busy' | 'error'; text: string } | null = null;

const STYLE =
  `
.d-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 8px; }
.d-chart { position: relative; height: 220px; }
.d-chart.d-short { height: 90px; }
.d-chart.d-mid { height: 160px; }
.d-cols { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.d-num { text-align: right; font-variant-numeric: tabular-nums; }
.d-swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; ` +
  `vertical-align: middle; }
.d-tree, .d-tree ul { list-style: none; padding-left: 14px; margin: 2px 0; }
.d-tree { padding-left: 0; }
.d-node { border-left: 3px solid var(--vscode-panel-border, #8884); padding: 2px 6px; margin: 4px 0; }
.d-node.d-match { border-left-color: var(--vscode-charts-green, #3a3); }
.d-node.d-mismatch { border-left-color: var(--vscode-charts-yellow, #cc0); }
.d-node.d-missing, .d-node.d-extra { border-left-color: var(--vscode-charts-red, #c33); }
.d-status { font-size: 0.85em; padding: 0 4px; border-radius: 3px; margin-left: 6px; border: 1px solid currentColor; }
.d-status.d-match { color: var(--vscode-charts-green, #3a3); }
.d-status.d-mismatch { color: var(--vscode-charts-yellow, #cc0); }
.d-status.d-missing, .d-status.d-extra { color: var(--vscode-charts-red, #c33); }
.d-diff { background: var(--vscode-diffEditor-removedTextBackground, #f003); ` +
  `outline: 1px solid var(--vscode-inputValidation-errorBorder, #c33); }
.d-low { color: var(--vscode-editorWarning-foreground); font-weight: 600; }
.d-tag { display: inline-block; font-size: 0.85em; margin: 1px 4px 1px 0; padding: 0 4px; border-radius: 3px;
  background: var(--vscode-inputValidation-warningBackground, #cc03); ` +
  `border: 1px solid var(--vscode-inputValidation-warningBorder, #cc0); }
.d-field { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
.d-field code { margin-right: 6px; }
.d-list { position: relative; overflow-y: auto; border: 1px solid var(--vscode-panel-border, #8884); }
.d-list:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
.d-window { position: absolute; top: 0; left: 0; right: 0; }
.d-lrow { display: grid; grid-template-columns: 9em minmax(8em, 1fr) 5em 9em 4em 6em 6em 4em; gap: 6px; ` +
  `align-items: center;
  height: 24px; padding: 0 6px; white-space: nowrap; font-size: var(--vscode-editor-font-size); }
.d-lrow > span { overflow: hidden; text-overflow: ellipsis; }
.d-lrow.d-row { position: absolute; left: 0; right: 0; box-sizing: border-box; }
.d-lhead { font-weight: 600; background: var(--vscode-editorWidget-background); }
.d-row:hover { background: var(--vscode-list-hoverBackground); cursor: pointer; }
.d-row.q-selected:hover { background: var(--vscode-list-activeSelectionBackground); }
.d-link { color: var(--vscode-textLink-foreground); }
.d-items { display: flex; flex-wrap: wrap; gap: 2px 10px; margin: 2px 0 6px 12px; }
.d-help { columns: 2; }
.d-bar { display: inline-block; height: 10px; min-width: 1px; vertical-align: middle; border-radius: 2px;
  background: var(--vscode-charts-orange, #d83); }
#filter { width: min(520px, 100%); }
h2 { font-size: 1.1em; margin: 8px 0 4px; }
h3 { font-size: 1em; margin: 6px 0 2px; }
`;
document.head.append(h('style', {}, STYLE));

const app = document.getElementById('app')!;
const header = h('div', { class: 'q-row', id: 'header' });
const helpBox = h('div', { class: 'q-card', id: 'help' });
const statusBox = h('div', { role: 'status', 'aria-live': 'polite', id: 'status' });
const content = h('div', { id: 'content' });
app.append(header, helpBox, statusBox, content);

function persist(): void {
  host.saveState(state);
}

let persistTimer: ReturnType<typeof setTimeout> | undefined;
/** Typing in the filter saves once the user pauses: the state holds the whole run and is copied on every save. */
function persistSoon(): void {
  clearTimeout(persistTimer);
  persistTimer = setTimeout(persist, 300);
}

const pct = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);
const num = (x: number | null | undefined, d = 3): string =>
  x === null || x === undefined ? '–' : String(Math.round(x * 10 ** d) / 10 ** d);

function card(title: string, ...body: (Node | string | null)[]): HTMLElement {
  return h('section', { class: 'q-card' }, h('h2', {}, title), ...body);
}

function chartBox(cls = ''): HTMLElement {
  return h('div', { class: `d-chart ${cls}` });
}

// ---------------------------------------------------------------------------------------------------------------
// Header, help, status

function renderHeader(): void {
  header.replaceChildren();
  header.append(h('strong', {}, 'Reward diagnostics'));
  if (state.source)
    header.append(
      h(
        'span',
        { class: 'q-muted', title: state.source.file },
        `${state.source.label} · ${state.source.records} records`,
      ),
    );
  const options = state.panels.length ? state.panels : [{ value: state.selected, label: state.selected }];
  const picker = dropdown(
    options,
    state.selected,
    (v) => {
      state.selected = v;
      persist();
      host.post({ type: 'setPanel', panel: v });
    },
    'panel-picker',
  );
  picker.setAttribute('aria-label', 'Reward panel');
  header.append(h('label', { for: 'panel-picker' }, 'Panel'), picker);
  header.append(
    button('Panel file…', () => host.post({ type: 'pickPanelFile' }), {
      appearance: 'secondary',
      title: 'Score with a panel JSON file',
    }),
  );
  header.append(
    button('Open file…', () => host.post({ type: 'openFile' }), {
      appearance: 'secondary',
      title: 'Diagnose another trajectory file (o)',
      id: 'open-file',
    }),
  );
  if (state.view === 'trajectory' && state.hasRun) {
    header.append(
      button('Back to run', () => host.post({ type: 'showRun' }), {
        appearance: 'secondary',
        title: 'Back to the run view (r)',
        id: 'back',
      }),
    );
  }
  header.append(
    button(state.help ? 'Hide keys' : 'Keys', toggleHelp, {
      appearance: 'secondary',
      title: 'Keyboard shortcuts (?)',
      id: 'keys',
    }),
  );
}

function renderHelp(): void {
  helpBox.hidden = !state.help;
  helpBox.replaceChildren(
    h('h3', {}, 'Keyboard'),
    h(
      'ul',
      { class: 'd-help' },
      ...SHORTCUTS.map((s) => h('li', {}, h('kbd', {}, s.key), ` ${s.does}`)),
      h(
        'li',
        {},
        h('kbd', {}, 'Tab'),
        ' moves through the picker, the buttons, the flag items and the trajectory list (one stop)',
      ),
    ),
  );
}

function toggleHelp(): void {
  state.help = !state.help;
  persist();
  renderHeader();
  renderHelp();
}

function renderStatus(): void {
  statusBox.replaceChildren();
  if (!status) return;
  if (status.kind === 'busy')
    statusBox.append(h('div', { class: 'q-row' }, progressRing(), h('span', {}, status.text)));
  else statusBox.append(h('div', { class: 'q-card q-error', role: 'alert' }, status.text));
}

// ---------------------------------------------------------------------------------------------------------------
// Run view

function openHere(id: string): void {
  host.post({ type: 'openTrajectory', id });
}

/** Plain anchors (not toolkit elements): a run can raise many flags, each naming many items. */
function itemLinks(ids: readonly string[], max = 24): HTMLElement {
  const box = h('div', { class: 'd-items' });
  for (const id of ids.slice(0, max)) {
    const a = h(
      'a',
      { href: '#', class: 'd-link', title: `Open ${id} here (Enter); Shift+click or Shift+Enter opens it in replay` },
      id,
    );
    a.addEventListener('click', (e) => {
      e.preventDefault();
      if (e.shiftKey) host.post({ type: 'openReplay', id });
      else openHere(id);
    });
    box.append(a);
  }
  if (ids.length > max)
    box.append(h('span', { class: 'q-muted' }, `+${ids.length - max} more (filter the list below)`));
  return box;
}

/** A run where nothing was scored: why, instead of EX 0.0% and empty charts. */
function renderNothingScored(run: RunDiagnostics, why: string[]): void {
  const src = state.source;
  const empty = card(
    'Nothing scored',
    h(
      'p',
      { id: 'nothing-scored' },
      `No trajectory of this file could be scored with `,
      h('strong', {}, run.panel),
      ': the charts need at least one scored trajectory (its gold SQL in task.gold and its database).',
    ),
    h('ul', {}, ...why.map((w) => h('li', {}, w))),
    src?.invalid.length
      ? h(
          'details',
          {},
          h('summary', { class: 'q-warn' }, `${src.invalid.length} line(s) of the file are not valid records`),
          h('ul', {}, ...src.invalid.map((s) => h('li', {}, s))),
        )
      : null,
  );
  content.replaceChildren(empty);
}

function renderRun(run: RunDiagnostics): void {
  const why = nothingScored(run);
  if (why) {
    renderNothingScored(run, why);
    return;
  }
  const t = theme();
  const src = state.source;
  const summary = card(
    'Run',
    h(
      'div',
      { class: 'q-row' },
      h('span', {}, `${run.scored} scored with `, h('strong', {}, run.panel)),
      h('span', {}, `EX ${pct(run.ex)}`),
      h('span', {}, `reward mean ${num(run.total.mean)} · min ${num(run.total.min)} · max ${num(run.total.max)}`),
      run.skipped.length ? h('span', { class: 'q-warn' }, `${run.skipped.length} skipped`) : null,
    ),
    run.skipped.length
      ? h(
          'details',
          {},
          h('summary', {}, 'Skipped trajectories'),
          h('ul', {}, ...run.skipped.slice(0, 50).map((s) => h('li', {}, `${s.id}: ${s.reason}`))),
        )
      : null,
    src?.invalid.length
      ? h(
          'details',
          {},
          h('summary', { class: 'q-warn' }, `${src.invalid.length} line(s) of the file are not valid records`),
          h('ul', {}, ...src.invalid.map((s) => h('li', {}, s))),
        )
      : null,
  );

  const rewardBox = chartBox(),
    turnsBox = chartBox(),
    hardBox = chartBox(),
    termsBox = chartBox();
  const charts = h(
    'div',
    { class: 'd-grid', id: 'run-charts' },
    card('Reward', rewardBox),
    card('Turns', turnsBox),
    card('EX by hardness', hardBox),
    card('Mean contribution per term', termsBox),
  );

  const flags = card(
    `Integrity flags (${run.flags.length})`,
    run.flags.length === 0
      ? h(
          'p',
          { class: 'q-ok' },
          'No flags: no empty-gold wins, failing golds, format failures, suspicious wins or zero-variance groups.',
        )
      : null,
    ...flagsByKind(run.flags),
  );
  flags.id = 'flags';

  let groups: HTMLElement;
  const advBox = chartBox(),
    spreadBox = chartBox();
  if (run.groups) {
    const g = run.groups;
    groups = card(
      'Groups (GRPO)',
      h(
        'p',
        {},
        `${g.count} questions with several samples; ` +
          `zero reward variance in ${g.zeroVariance} (${pct(g.zeroVarianceShare)}): no gradient from them. ` +
          `Mean pass@G ${num(g.meanPass)}; solved by all samples ${g.solvedByAll}, by none ${g.solvedByNone}.`,
      ),
      g.zeroVarianceIds.length
        ? h(
            'div',
            {},
            h('span', { class: 'q-muted' }, 'Zero-variance groups: '),
            h(
              'span',
              {},
              g.zeroVarianceIds.slice(0, 30).join(', ') +
                (g.zeroVarianceIds.length > 30 ? ` … (+${g.zeroVarianceIds.length - 30})` : ''),
            ),
          )
        : null,
      h(
        'div',
        { class: 'd-grid' },
        h('div', {}, h('h3', {}, 'Advantages'), advBox),
        h('div', {}, h('h3', {}, 'Advantage spread per group (max − min)'), spreadBox),
      ),
    );
  } else {
    groups = card('Groups (GRPO)', h('p', { class: 'q-muted' }, 'Every question has one sample: no group statistics.'));
  }
  groups.id = 'groups';

  // A state saved by an older version has no mismatch report: the host sends one with the next run.
  const mismatch = run.mismatch ? [renderMismatch(run.mismatch)] : [];
  content.replaceChildren(summary, charts, flags, groups, ...mismatch, renderList(run.items));

  histogramChart(rewardBox, run.reward, {
    title: 'Reward histogram',
    xTitle: `${run.panel} reward`,
    color: t.palette[0],
  });
  histogramChart(turnsBox, run.turns, { title: 'Turns histogram', xTitle: 'turns', color: t.palette[2] });
  const levels = run.byHardness;
  barChart(hardBox, {
    labels: levels.map((l) => `${l.hardness} (${l.count})`),
    datasets: [{ label: 'EX', data: levels.map((l) => l.ex ?? 0), color: t.palette[0] }],
    min: 0,
    max: 1,
    yTitle: 'execution accuracy',
    describe: `EX by hardness: ${levels.map((l) => `${l.hardness} ${pct(l.ex)} of ${l.count}`).join(', ')}`,
    format: (v) => pct(v),
  });
  barChart(termsBox, {
    labels: run.terms.map((x) => `${x.name} (×${x.weight})`),
    datasets: [
      {
        label: 'mean contribution',
        data: run.terms.map((x) => x.meanContribution),
        color: run.terms.map((x) => (x.meanContribution < 0 ? t.negative : t.positive)),
      },
    ],
    yTitle: 'mean weight · value',
    describe: `Mean contribution per term: ${run.terms.map((x) => `${x.name} ${num(x.meanContribution)}`).join(', ')}`,
  });
  if (run.groups) {
    histogramChart(advBox, run.groups.advantages, {
      title: 'Advantage histogram',
      xTitle: 'advantage',
      color: t.palette[1],
    });
    histogramChart(spreadBox, run.groups.spread, {
      title: 'Advantage spread histogram',
      xTitle: 'max − min advantage',
      color: t.palette[4],
    });
  }
}

const FLAGS_SHOWN = 10;

function flagEl(f: IntegrityFlag): HTMLElement {
  return h('div', { class: 'd-flag' }, h('div', { class: 'q-warn' }, f.text), itemLinks(f.items));
}

/**
 * The first few flags of each kind; the rest of a kind behind a disclosure drawn when opened (a large run can raise
 * a zero-variance flag for thousands of groups).
 */
function flagsByKind(flags: readonly IntegrityFlag[]): HTMLElement[] {
  const kinds = [...new Set(flags.map((f) => f.kind))];
  const out: HTMLElement[] = [];
  for (const kind of kinds) {
    const all = flags.filter((f) => f.kind === kind);
    out.push(...all.slice(0, FLAGS_SHOWN).map(flagEl));
    if (all.length > FLAGS_SHOWN) {
      const rest = all.slice(FLAGS_SHOWN);
      const more = h('details', {}, h('summary', {}, `${rest.length} more ${kind} flag(s)`));
      more.addEventListener(
        'toggle',
        () => {
          if (more.open && more.children.length === 1) more.append(...rest.map(flagEl));
        },
        { once: false },
      );
      out.push(more);
    }
  }
  return out;
}

/** Shows the trajectories a tag fired for: the list's filter set to the tag. */
function filterByTag(tag: string): void {
  state.filter = tag;
  persist();
  render();
  document.getElementById('trajectories')?.scrollIntoView();
}

function bar(rate: number | null): HTMLElement {
  const el = h('span', { class: 'd-bar', 'aria-hidden': 'true' });
  el.style.width = `${Math.round(120 * (rate ?? 0))}px`;
  return el;
}

function tagLink(tag: string, count: number): HTMLElement {
  const title = `Show the ${count} trajectories tagged ${tag} in the list below`;
  const a = h('a', { href: '#', class: 'd-link', title }, tag);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    filterByTag(tag);
  });
  return a;
}

/** Sentence listing what the ODT could not compare (these have no tags and are left out of the rates). */
function notCompared(s: MismatchScope): string {
  const ex = s.excluded;
  return [
    ex.noSql && `${ex.noSql} without SQL`,
    ex.predUnparsed && `${ex.predUnparsed} prediction(s) that do not parse`,
    ex.goldUnparsed && `${ex.goldUnparsed} gold(s) that do not parse`,
  ]
    .filter(Boolean)
    .join(', ');
}

/** One scope of the report: the four categories with their tags, count, rate and a bar, then Avg. Err.; then tags. */
function mismatchScope(s: MismatchScope): HTMLElement {
  const countOf = new Map(s.tags.map((t) => [t.tag, t.count]));
  const numeric = (i: number) => (i === 2 || i === 3 ? 'd-num' : '');
  const row = (cells: (Node | string)[]) => h('tr', {}, ...cells.map((c, i) => h('td', { class: numeric(i) }, c)));
  const columns = ['category', 'tags', 'count', 'rate', ''];
  const head = h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c))));
  const cats = s.categories.map((c) => {
    const tags = h('span', {}, ...c.tags.flatMap((t, i) => [i ? ', ' : '', tagLink(t, countOf.get(t) ?? 0)]));
    return row([c.name, tags, String(c.count), pct(c.rate), bar(c.rate)]);
  });
  const avg = row([
    h('strong', {}, 'Avg. Err.'),
    h('span', { class: 'q-muted' }, 'mean of the four rates'),
    '',
    pct(s.average),
    bar(s.average),
  ]);
  const fired = s.tags.filter((t) => t.count > 0);
  const tagList = fired.length
    ? fired.flatMap((t, i) => [i ? ' · ' : '', tagLink(t.tag, t.count), ` ${t.count} (${pct(t.rate)})`])
    : ['none fired'];
  const apart = notCompared(s);
  const who = s.name === 'greedy' ? 'Greedy (temperature 0) trajectories' : 'All trajectories';
  return h(
    'div',
    { class: 'd-mismatch-scope', 'data-scope': s.name },
    h('h3', {}, `${who}: ${s.compared} of ${s.trajectories} compared`),
    h('table', { class: 'q-table' }, head, h('tbody', {}, ...cats, avg)),
    h('p', {}, h('span', { class: 'q-muted' }, 'Tags: '), ...tagList),
    apart ? h('p', { class: 'q-muted' }, `Not compared (no tags, left out of the rates): ${apart}.`) : null,
  );
}

/** Progress-SQL Table 8 for the run, with the choice of SQL compared (the host recomputes on a change). */
function renderMismatch(m: MismatchReport): HTMLElement {
  const picker = dropdown(
    MISMATCH_SQL_CHOICES.map((c) => ({ value: c.value, label: c.label })),
    m.sql,
    (v) => host.post({ type: 'setMismatchSql', sql: v }),
    'mismatch-sql',
  );
  picker.setAttribute('aria-label', 'SQL compared');
  const box = card(
    'Structural mismatches (Progress-SQL Table 8)',
    h(
      'p',
      { class: 'q-muted' },
      'Share of compared predictions with an ODT tag of each category (the tag → category ' +
        'map is ours, see docs/rewards.md). Table 8 reports these for single-turn greedy predictions.',
    ),
    h('div', { class: 'q-row' }, h('label', { for: 'mismatch-sql' }, 'Compare the'), picker),
    ...m.scopes.map(mismatchScope),
  );
  box.id = 'mismatch';
  return box;
}

function matches(it: RunItem, q: string): boolean {
  if (q === '') return true;
  const tags = (it.odtTags ?? []).join(' ');
  const verdict = it.correct ? 'correct' : 'incorrect';
  return `${it.id} ${it.groupId} ${it.question} ${it.hardness ?? ''} ${verdict} ${it.reason} ${tags}`
    .toLowerCase()
    .includes(q);
}

const ROW_PX = 24;
const LIST_COLUMNS = ['id', 'question', 'reward', 'EX', 'turns', 'hardness', 'advantage', ''];

/**
 * The trajectory list: a virtualised listbox (only the rows in view exist in the DOM, plain elements, so 10,000
 * trajectories scroll as fast as ten). One tab stop; arrows, PageUp/PageDown, Home/End move the active row.
 */
function renderList(items: RunItem[]): HTMLElement {
  const box = card('Trajectories');
  box.id = 'trajectories';
  const placeholder = 'Filter: id, question, hardness, correct/incorrect, reason, ODT tag';
  const filter = textField({ placeholder, value: state.filter, id: 'filter' });
  filter.setAttribute('aria-label', 'Filter trajectories');
  const count = h('p', { class: 'q-muted', id: 'trajectory-count' });
  const head = h(
    'div',
    { class: 'd-lrow d-lhead', 'aria-hidden': 'true' },
    ...LIST_COLUMNS.map((c) => h('span', {}, c)),
  );
  const spacer = h('div', { class: 'd-spacer' });
  const windowEl = h('div', { class: 'd-window' });
  const list = h(
    'div',
    {
      class: 'd-list',
      id: 'trajectory-list',
      role: 'listbox',
      tabindex: 0,
      'aria-label': 'Trajectories, lowest reward first. Enter: diagnose; Shift+Enter: replay',
    },
    spacer,
    windowEl,
  );
  let shown: RunItem[] = [];
  let active = 0;
  let frame = 0;

  const rowEl = (it: RunItem, i: number): HTMLElement => {
    const replay = h('a', { href: '#', class: 'd-link', tabindex: -1 }, 'replay');
    replay.addEventListener('click', (e) => {
      e.preventDefault();
      e.stopPropagation();
      host.post({ type: 'openReplay', id: it.id });
    });
    const row = h(
      'div',
      {
        class: `d-lrow d-row${i === active ? ' q-selected' : ''}`,
        role: 'option',
        id: `row-${i}`,
        'data-id': it.id,
        'aria-selected': i === active ? 'true' : 'false',
        title: it.question,
      },
      h('span', {}, it.id),
      h('span', {}, it.question),
      h('span', { class: 'd-num' }, num(it.total)),
      h('span', { class: it.correct ? 'q-ok' : 'q-error' }, it.correct ? '✓' : `✗ ${it.reason}`),
      h('span', { class: 'd-num' }, String(it.turns)),
      h('span', {}, it.hardness ?? '–'),
      h('span', { class: 'd-num' }, num(it.advantage)),
      h('span', {}, replay),
    );
    row.style.top = `${i * ROW_PX}px`;
    row.addEventListener('click', () => {
      active = i;
      openHere(it.id);
    });
    return row;
  };

  const paint = () => {
    frame = 0;
    const first = Math.max(0, Math.floor(list.scrollTop / ROW_PX) - 5);
    const last = Math.min(shown.length, Math.ceil((list.scrollTop + list.clientHeight) / ROW_PX) + 5);
    windowEl.replaceChildren(...shown.slice(first, last).map((it, k) => rowEl(it, first + k)));
    if (shown.length) list.setAttribute('aria-activedescendant', `row-${active}`);
    else list.removeAttribute('aria-activedescendant');
  };
  const paintSoon = () => {
    if (!frame) frame = requestAnimationFrame(paint);
  };

  const draw = () => {
    const q = state.filter.trim().toLowerCase();
    // Lowest reward first: the items worth a look.
    shown = items.filter((it) => matches(it, q)).sort((a, b) => a.total - b.total || a.id.localeCompare(b.id));
    active = Math.min(active, Math.max(0, shown.length - 1));
    spacer.style.height = `${shown.length * ROW_PX}px`;
    list.style.height = `${Math.min(15, Math.max(1, shown.length)) * ROW_PX + 2}px`;
    count.textContent = `${shown.length} of ${items.length} trajectories, lowest reward first`;
    paint();
  };

  const move = (to: number) => {
    if (!shown.length) return;
    active = Math.max(0, Math.min(shown.length - 1, to));
    const top = active * ROW_PX;
    if (top < list.scrollTop) list.scrollTop = top;
    else if (top + ROW_PX > list.scrollTop + list.clientHeight) list.scrollTop = top + ROW_PX - list.clientHeight;
    paint();
  };
  const page = () => Math.max(1, Math.floor(list.clientHeight / ROW_PX) - 1);
  list.addEventListener('scroll', paintSoon);
  list.addEventListener('keydown', (e) => {
    const keys: Record<string, () => void> = {
      ArrowDown: () => move(active + 1),
      ArrowUp: () => move(active - 1),
      PageDown: () => move(active + page()),
      PageUp: () => move(active - page()),
      Home: () => move(0),
      End: () => move(shown.length - 1),
      Enter: () => {
        const it = shown[active];
        if (!it) return;
        if (e.shiftKey) host.post({ type: 'openReplay', id: it.id });
        else openHere(it.id);
      },
    };
    const f = keys[e.key];
    if (f) {
      e.preventDefault();
      e.stopPropagation();
      f();
    }
  });
  filter.addEventListener('input', () => {
    state.filter = filter.value;
    active = 0;
    list.scrollTop = 0;
    persistSoon();
    draw();
  });
  box.append(filter, count, head, list);
  // Sizes are known once the box is in the page.
  queueMicrotask(draw);
  return box;
}

// ---------------------------------------------------------------------------------------------------------------
// Trajectory view

function sqlBlock(title: string, sql: string | null): HTMLElement {
  return h('div', {}, h('h3', {}, title), sql === null ? h('p', { class: 'q-muted' }, '(none)') : highlightSql(sql));
}

function renderTerms(d: TrajectoryDiagnostics): HTMLElement {
  const t = theme();
  const colours = d.terms.map((_, i) => t.palette[i % t.palette.length]);
  const barBox = chartBox('d-short');
  const legend = h(
    'table',
    { class: 'q-table', id: 'terms-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['term', 'weight × value', 'contribution', 'explanation'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      ...d.terms.map((term, i) => {
        const sw = h('span', { class: 'd-swatch' });
        sw.style.background = colours[i];
        return h(
          'tr',
          {},
          h(
            'td',
            {},
            sw,
            term.name,
            term.passed === false
              ? h('span', { class: 'q-error', title: term.failure ?? '' }, ' ✗')
              : term.passed
                ? h('span', { class: 'q-ok' }, ' ✓')
                : null,
          ),
          h('td', { class: 'd-num' }, `${num(term.weight)} × ${num(term.value)}`),
          h('td', { class: `d-num ${term.contribution < 0 ? 'q-error' : ''}` }, num(term.contribution)),
          h('td', {}, term.explanation),
        );
      }),
    ),
  );
  const box = card(
    `Reward ${num(d.total)} (${d.panel})`,
    d.terms.length ? barBox : null,
    d.terms.length ? legend : h('p', { class: 'q-muted' }, 'Nothing scored.'),
  );
  box.id = 'terms';
  if (d.terms.length) {
    queueMicrotask(() =>
      barChart(barBox, {
        labels: ['reward'],
        datasets: d.terms.map((term, i) => ({
          label: `${term.name} ${num(term.contribution)}`,
          data: [term.contribution],
          color: colours[i],
        })),
        stacked: true,
        horizontal: true,
        legend: true,
        describe:
          `Terms of ${d.panel}: ${d.terms.map((x) => `${x.name} ${num(x.contribution)}`).join(', ')}; ` +
          `total ${num(d.total)}`,
      }),
    );
  }
  return box;
}

function treeNode(n: OdtViewNode): HTMLElement {
  const head = h(
    'div',
    {},
    h('strong', {}, n.type),
    n.label ? ` (${n.label})` : '',
    h('span', { class: `d-status d-${n.status}` }, n.status),
    n.score !== null ? h('span', { class: 'q-muted' }, `  s_node ${num(n.score, 2)}`) : '',
  );
  const tags = n.tags.length
    ? h('div', {}, ...n.tags.map((x) => h('span', { class: 'd-tag', title: x.detail }, x.tag)))
    : null;
  const flags = n.flags.length
    ? h(
        'div',
        { class: 'd-field' },
        h('span', { class: 'q-muted' }, 'flags: '),
        ...n.flags.map((f) => h('code', { class: f.differs ? 'd-diff' : '' }, f.name)),
      )
    : null;
  const counts = n.counts
    ? h('div', { class: 'd-field q-muted' }, `joins ${n.counts.joins} · select items ${n.counts.selectItems}`)
    : null;
  const fields = n.fields
    .filter((f) => f.items.length > 0 || (f.similarity !== null && f.similarity < 1))
    .map((f) =>
      h(
        'div',
        { class: 'd-field' },
        h(
          'span',
          { class: f.low ? 'd-low' : 'q-muted', title: f.low ? 'below the tag threshold' : '' },
          `${f.name}${f.similarity !== null ? ` ${num(f.similarity, 2)}` : ''}: `,
        ),
        ...(f.items.length
          ? f.items.map((i) =>
              h(
                'code',
                { class: i.onlyHere ? 'd-diff' : '', title: i.onlyHere ? 'not in the other tree' : '' },
                i.text,
              ),
            )
          : [h('span', { class: 'q-muted' }, '∅')]),
      ),
    );
  return h(
    'li',
    {},
    h('div', { class: `d-node d-${n.status}` }, head, tags, counts, flags, ...fields),
    n.children.length ? h('ul', {}, ...n.children.map(treeNode)) : null,
  );
}

function tree(title: string, root: OdtViewNode | null, error: string | null, id: string): HTMLElement {
  return h(
    'div',
    { id },
    h('h3', {}, title),
    root
      ? h('ul', { class: 'd-tree' }, treeNode(root))
      : h('p', { class: 'q-error' }, `does not parse: ${error ?? 'unknown error'}`),
  );
}

function renderOdt(odt: OdtView | null): HTMLElement {
  const box = card('Oracle-guided diagnostic tree (Progress-SQL)');
  box.id = 'odt';
  if (!odt) {
    box.append(h('p', { class: 'q-muted' }, 'No ODT: the trajectory has no final SQL or no gold.'));
    return box;
  }
  box.append(
    h('p', {}, `F_struct ${num(odt.struct)} · F_lex ${num(odt.lexical)} · F ${num(odt.F)}`),
    odt.tags.length
      ? h(
          'ul',
          {},
          ...odt.tags.map((x) =>
            h(
              'li',
              {},
              h('span', { class: 'd-tag' }, x.tag),
              ` ${x.meaning} `,
              h('span', { class: 'q-muted' }, x.reasons.join('; ')),
            ),
          ),
        )
      : h('p', { class: 'q-ok' }, 'No diagnostic tags.'),
    // The text is App. F's next-turn message, which starts with its own "Feedback:".
    odt.feedback
      ? h(
          'details',
          {},
          h('summary', {}, 'Next-turn feedback the Progress-SQL protocol would send'),
          h('p', { class: 'q-muted' }, odt.feedback),
        )
      : '',
    h(
      'p',
      { class: 'q-muted' },
      'Highlighted items are in one tree only; a yellow node matched with differences, a red one has no counterpart.',
    ),
    h(
      'div',
      { class: 'd-cols' },
      tree('Prediction', odt.pred, odt.predError, 'odt-pred'),
      tree('Gold', odt.gold, odt.goldError, 'odt-gold'),
    ),
  );
  return box;
}

function renderClauses(d: TrajectoryDiagnostics): HTMLElement {
  const box = card('Clause F1 (MTSQL-R1)');
  box.id = 'clauses';
  const c = d.clauses;
  if (!c) {
    box.append(h('p', { class: 'q-muted' }, 'No clause comparison: no final SQL or no gold.'));
    return box;
  }
  if (c.goldParseError || c.parseError)
    box.append(
      h(
        'p',
        { class: 'q-error' },
        c.goldParseError ? `gold does not parse: ${c.goldParseError}` : `prediction does not parse: ${c.parseError}`,
      ),
    );
  const chart = chartBox('d-mid');
  const t = theme();
  box.append(
    h('p', {}, `Mean over the clauses present: ${num(c.value)}`),
    chart,
    table(
      ['clause', 'F1', 'prediction', 'gold'],
      c.rows.map((r) => [
        r.clause.toUpperCase(),
        r.f1 === null ? 'absent from both' : num(r.f1),
        r.pred.join(' | ') || '∅',
        r.gold.join(' | ') || '∅',
      ]),
    ),
  );
  queueMicrotask(() =>
    barChart(chart, {
      labels: c.rows.map((r) => r.clause.toUpperCase()),
      datasets: [
        {
          label: 'F1',
          data: c.rows.map((r) => r.f1 ?? 0),
          color: c.rows.map((r) => (r.f1 === null ? t.muted : r.f1 < 1 ? t.palette[1] : t.positive)),
        },
      ],
      min: 0,
      max: 1,
      yTitle: 'F1',
      describe: `Clause F1: ${c.rows.map((r) => `${r.clause} ${r.f1 === null ? 'absent' : num(r.f1)}`).join(', ')}`,
    }),
  );
  return box;
}

function renderVerification(d: TrajectoryDiagnostics): HTMLElement {
  const box = card('Verification verdicts (MTSQL-R1)');
  box.id = 'verification';
  if (!d.verification) box.append(h('p', { class: 'q-muted' }, 'The trajectory has no E-VERIFY or M-VERIFY verdicts.'));
  else
    box.append(
      table(
        ['turn', 'kind', 'model said', 'verdict', 'reward', 'why'],
        d.verification.map((v) => [v.turn + 1, v.kind, v.said, v.verdict, num(v.value), v.why]),
      ),
    );
  return box;
}

function renderTrajectory(d: TrajectoryDiagnostics): void {
  const exec = d.exec;
  const head = card(
    `Trajectory ${d.id}`,
    h('p', {}, d.question),
    h(
      'div',
      { class: 'q-row q-muted' },
      `group ${d.groupId} · sample ${d.sample} · ${d.protocol} · ${d.model} · ended ${d.end} · ` +
        `${d.turns} turn(s) · hardness ${d.hardness ?? 'unknown'}`,
    ),
    h(
      'div',
      { class: 'q-row' },
      exec
        ? h(
            'span',
            { class: exec.correct ? 'q-ok' : 'q-error' },
            exec.correct
              ? 'Execution: correct'
              : `Execution: wrong (${exec.reason}${exec.detail ? `: ${exec.detail}` : ''})`,
          )
        : null,
      button('Open in replay', () => host.post({ type: 'openReplay', id: d.id }), {
        appearance: 'secondary',
        id: 'replay',
      }),
    ),
    ...d.notes.map((n) => h('p', { class: 'q-warn' }, n)),
    h('div', { class: 'd-cols' }, sqlBlock('Final SQL', d.finalSql), sqlBlock('Gold SQL', d.goldSql)),
  );
  head.id = 'trajectory-head';
  content.replaceChildren(head, renderTerms(d), renderOdt(d.odt), renderClauses(d), renderVerification(d));
}

// ---------------------------------------------------------------------------------------------------------------

function render(): void {
  // A run drawn again while the user types in its filter (a rescore landing, the panel settling on the file's own
  // protocol) keeps the focus in the new filter box: state.filter already holds what was typed, and no key is lost.
  const typing = document.activeElement?.id === 'filter';
  destroyCharts();
  renderHeader();
  renderHelp();
  renderStatus();
  if (state.view === 'run' && state.run) renderRun(state.run);
  else if (state.view === 'trajectory' && state.trajectory) renderTrajectory(state.trajectory);
  else
    content.replaceChildren(
      h('p', { class: 'q-muted' }, 'Open a trajectory file to see its rewards (Open file…, or o).'),
    );
  if (typing) (document.getElementById('filter') as HTMLElement | null)?.focus();
}

host.onMessage((m) => {
  switch (m.type) {
    case 'panels':
      state.panels = m.panels;
      state.selected = m.selected;
      persist();
      renderHeader();
      return;
    case 'busy':
      status = { kind: 'busy', text: m.text };
      renderStatus();
      return;
    case 'error':
      status = { kind: 'error', text: m.text };
      renderStatus();
      return;
    case 'run':
      status = null;
      // Another file: its own list, unfiltered.
      if (state.source?.file !== m.source.file) state.filter = '';
      state.source = m.source;
      state.run = m.run;
      state.trajectory = null;
      state.view = 'run';
      state.hasRun = true;
      persist();
      render();
      window.scrollTo(0, 0);
      return;
    case 'trajectory':
      status = null;
      state.source = m.source;
      state.trajectory = m.trajectory;
      state.hasRun = m.hasRun;
      if (!m.hasRun) state.run = null;
      state.view = 'trajectory';
      persist();
      render();
      window.scrollTo(0, 0);
      return;
  }
});

window.addEventListener('keydown', (e) => {
  const target = e.target as HTMLElement | null;
  const typing =
    target &&
    (target.tagName === 'INPUT' ||
      target.tagName === 'TEXTAREA' ||
      target.closest('vscode-text-field, vscode-text-area'));
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  if (e.key === 'r' && state.view === 'trajectory' && state.hasRun) {
    e.preventDefault();
    host.post({ type: 'showRun' });
  } else if (e.key === 'o') {
    e.preventDefault();
    host.post({ type: 'openFile' });
  } else if (e.key === 'p') {
    e.preventDefault();
    (document.getElementById('panel-picker') as HTMLElement | null)?.focus();
  } else if (e.key === 'f' && state.view === 'run') {
    e.preventDefault();
    (document.getElementById('filter') as HTMLElement | null)?.focus();
  } else if (e.key === '?') {
    e.preventDefault();
    toggleHelp();
  }
});

// VS Code switches the body's theme class when the colour theme changes: redraw so charts pick up the new colours.
// Only then (the class or the chart colours differ): VS Code also removes and re-adds the same classes when it
// reapplies its styles, and a full redraw there would replace the list under the reviewer's focus.
const themeSignature = () => `${document.body.className} ${JSON.stringify(theme())}`;
let drawnTheme = themeSignature();
new MutationObserver(() => {
  const now = themeSignature();
  if (now === drawnTheme) return;
  drawnTheme = now;
  render();
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

render();
host.post({ type: 'ready' });
