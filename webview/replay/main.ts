// The replay panel's app: a filter bar, a virtualised list of trajectory summaries (fixed row height, only the visible
// rows in the DOM), and a side pane with one trajectory turn by turn, two side by side, or a GRPO group in columns.
// Keyboard first: j/k ↑/↓ move in the list, n/p ←/→ step turns, Enter opens, x marks, c compares, g groups, ? helps.
import { connectHost } from '../shared/host';
import { registerComponents, h, button, dropdown, textField, badge, tag, setDisabled } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import { unpackRows } from '../../src/protocol/replay';
import { alignTurns } from '../../src/core/trajectories/index-compare';
import type {
  ToApp, ToHost, ReplayAppState, ListRow, TrajectoryFilter, Facets, Explanation, DiffPart, GroupMember,
  GroupStatistics, InvalidLine,
} from '../../src/protocol/replay';
import type { TrajectoryRecord, TrajectoryTurn } from '../../src/core/trajectories/types';

registerComponents();
const host = connectHost<ToHost, ToApp, ReplayAppState>();

const ROW_H = 24;
/** Rows rendered above and below the visible ones, so fast scrolling does not show blanks. */
const OVERSCAN = 8;

// ---------------------------------------------------------------------------------------------------------------
// State

const saved = host.state();
const app: ReplayAppState = saved ?? { file: null, filter: {}, selectedId: null, markedIds: [], view: 'detail', turn: 0, scrollTop: 0 };
let summaries: ListRow[] = [];
let keys: number[] = [];
let total = 0;
let facetsNow: Facets | null = null;
let fileLabel = '';
let panels: string[] = ['auto'];
let panelName = 'auto';
let invalid: InvalidLine[] = [];
let truncated: string | null = null;
let seq = 0;
let cursor = -1; // index into keys
let scoring = { done: 0, total: 0, running: false };
let detail: { key: number; record: TrajectoryRecord; explanation: Explanation | null; explainError: string | null } | null = null;
let compare: { a: { key: number; record: TrajectoryRecord }; b: { key: number; record: TrajectoryRecord }; diff: DiffPart[] } | null = null;
let group: { groupId: string; panel: string; members: GroupMember[]; stats: GroupStatistics } | null = null;
let restorePending = saved !== undefined && saved.selectedId !== null;
/** The turn to show when a restored trajectory arrives (the panel was hidden on it). */
let restoreTurn: number | null = null;
let message: { text: string; error: boolean } | null = null;

function persist(): void {
  app.scrollTop = viewport.scrollTop;
  host.saveState(app);
}

// ---------------------------------------------------------------------------------------------------------------
// Styles (theme variables only)

document.head.append(h('style', {}, `
#app { display: flex; flex-direction: column; height: 100vh; box-sizing: border-box; }
body { padding: 0 8px; overflow: hidden; }
.r-head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; padding: 6px 0; }
.r-head h1 { font-size: 1.1em; margin: 0 8px 0 0; font-weight: 600; }
.r-filters { display: flex; gap: 6px; align-items: flex-end; flex-wrap: wrap; padding-bottom: 6px; border-bottom: 1px solid var(--vscode-panel-border, #8884); }
.r-filters label.r-f { display: flex; flex-direction: column; font-size: 0.85em; color: var(--vscode-descriptionForeground); gap: 2px; }
.r-filters .r-num { width: 72px; --input-min-width: 56px; }
.r-filters .r-num::part(root) { min-width: 0; }
.r-filters .r-search { width: 220px; --input-min-width: 120px; }
.r-main { display: flex; flex: 1; min-height: 0; gap: 8px; padding-top: 6px; }
.r-listbox { display: flex; flex-direction: column; flex: 0 0 46%; min-width: 320px; border: 1px solid var(--vscode-panel-border, #8884);
  overflow: hidden; container-type: inline-size; }
/* Compare and group views need the width: the list gives up part of its share (it keeps its priority columns). */
.r-main.r-columns .r-listbox { flex-basis: 30%; min-width: 260px; }
/* A narrow panel stacks the list above the detail instead of squeezing both. */
@media (max-width: 1000px) { .r-main { flex-direction: column; } .r-listbox { flex: 0 0 38%; min-width: 0; } }
.r-listbox:focus-within { border-color: var(--vscode-focusBorder); }
.r-viewport { flex: 1; overflow-y: auto; position: relative; outline: none; }
.r-spacer { position: relative; }
.r-row, .r-colhead { display: grid; gap: 4px; align-items: center; height: ${ROW_H}px; padding: 0 4px; box-sizing: border-box; white-space: nowrap;
  grid-template-columns: 12px 14px 44px minmax(80px, 1fr) 40px 56px; }
/* Columns by priority as the list gets wider: verdict, line, question, turns, reward always; then protocol and label; then model and db. */
.r-row .c-wide, .r-colhead .c-wide, .r-row .c-wider, .r-colhead .c-wider { display: none; }
@container (min-width: 480px) {
  .r-row, .r-colhead { grid-template-columns: 12px 14px 44px minmax(80px, 1fr) 60px 40px 56px 90px; }
  .r-row .c-wide, .r-colhead .c-wide { display: block; }
}
@container (min-width: 720px) {
  .r-row, .r-colhead { grid-template-columns: 12px 14px 44px minmax(100px, 1fr) 60px 110px 100px 40px 56px 100px; }
  .r-row .c-wider, .r-colhead .c-wider { display: block; }
}
.r-row { position: absolute; left: 0; right: 0; cursor: pointer; }
.r-row > span, .r-colhead > span { overflow: hidden; text-overflow: ellipsis; }
.r-row:hover { background: var(--vscode-list-hoverBackground); }
.r-row.r-cursor { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
.r-row.r-marked .r-mark::before { content: '◆'; color: var(--vscode-focusBorder); }
.r-colhead { font-weight: 600; color: var(--vscode-descriptionForeground); border-bottom: 1px solid var(--vscode-panel-border, #8884); }
.r-num-cell { text-align: right; font-variant-numeric: tabular-nums; }
.r-row .c-label, .r-colhead .c-label { padding-left: 8px; }
.r-side { flex: 1; overflow: auto; min-width: 0; }
.r-turn { border-left: 3px solid transparent; }
.r-turn.r-current { border-left-color: var(--vscode-focusBorder); }
.r-meta { display: flex; gap: 10px; flex-wrap: wrap; color: var(--vscode-descriptionForeground); font-size: 0.9em; }
.r-terms { border-collapse: collapse; width: 100%; }
.r-terms td, .r-terms th { border-bottom: 1px solid var(--vscode-panel-border, #8884); padding: 2px 6px; text-align: left; vertical-align: top; }
.r-bar { display: inline-block; height: 8px; background: var(--vscode-charts-blue, #4e79a7); vertical-align: middle; }
.r-bar.r-neg { background: var(--vscode-charts-red, #e15759); }
.r-del { background: var(--vscode-diffEditor-removedTextBackground, #ff000033); text-decoration: line-through; }
.r-add { background: var(--vscode-diffEditor-insertedTextBackground, #00ff0033); }
.r-cols { display: grid; gap: 8px; align-items: start; }
.r-cell { border: 1px solid var(--vscode-panel-border, #8884); border-radius: 3px; padding: 4px 6px; min-width: 0; }
.r-cell pre { max-height: 220px; overflow: auto; }
.r-rowhead { font-weight: 600; color: var(--vscode-descriptionForeground); grid-column: 1 / -1; margin-top: 6px; }
.r-help { position: fixed; inset: 40px 20% auto 20%; background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-widget-border, var(--vscode-focusBorder));
  padding: 8px 16px; box-shadow: 0 2px 8px var(--vscode-widget-shadow, #0008); z-index: 10; }
.r-help table td { padding: 2px 10px 2px 0; }
kbd { font-family: var(--vscode-editor-font-family); border: 1px solid var(--vscode-panel-border, #8884); border-radius: 3px; padding: 0 4px; }
.r-notice { padding: 4px 0; }
.r-empty { padding: 16px; color: var(--vscode-descriptionForeground); }
`));

// ---------------------------------------------------------------------------------------------------------------
// Layout

const root = document.getElementById('app')!;
const title = h('h1', {}, 'Trajectory replay');
const counts = h('span', { id: 'r-counts', class: 'q-muted', 'aria-live': 'polite' });
const scoreStatus = h('span', { id: 'r-score-status', class: 'q-muted' });
const scoreButton = button('Score all', () => host.post(scoring.running ? { type: 'stopScoring' } : { type: 'score' }),
  { appearance: 'secondary', id: 'r-score', title: 'Compute verdicts and rewards for every trajectory (execution against the gold)' });
const panelSlot = h('span');
const head = h('div', { class: 'r-head' }, title, counts, scoreStatus, scoreButton, panelSlot,
  button('Compare', () => openCompare(), { appearance: 'secondary', id: 'r-compare', title: 'Compare the two marked trajectories (c)' }),
  button('Group', () => openGroup(), { appearance: 'secondary', id: 'r-group', title: 'All samples of this question (g)' }),
  button('Open…', () => host.post({ type: 'pickSource' }), { appearance: 'secondary', id: 'r-open', title: 'Open another trajectory file or the workspace store' }),
  button('?', () => toggleHelp(), { appearance: 'icon', id: 'r-help-button', title: 'Keyboard shortcuts (?)' }));
const filters = h('div', { class: 'r-filters', role: 'search' });
const notice = h('div', { class: 'r-notice', id: 'r-notice' });
const viewport = h('div', { class: 'r-viewport', tabindex: 0, role: 'listbox', 'aria-label': 'Trajectories', id: 'r-list' });
const spacer = h('div', { class: 'r-spacer' });
viewport.append(spacer);
const colhead = h('div', { class: 'r-colhead', 'aria-hidden': 'true' },
  h('span'), h('span', { title: 'verdict' }, '✓'), h('span', {}, 'line'), h('span', {}, 'question'), h('span', { class: 'c-wide' }, 'protocol'),
  h('span', { class: 'c-wider' }, 'model'), h('span', { class: 'c-wider' }, 'db'), h('span', { class: 'r-num-cell', title: 'turns' }, 'turns'),
  h('span', { class: 'r-num-cell' }, 'reward'), h('span', { class: 'c-wide c-label' }, 'label'));
const listbox = h('div', { class: 'r-listbox' }, colhead, viewport);
const side = h('div', { class: 'r-side', id: 'r-side', tabindex: -1 });
const help = h('div', { class: 'r-help', id: 'r-help', role: 'dialog', 'aria-label': 'Keyboard shortcuts', hidden: true });
const main = h('div', { class: 'r-main' }, listbox, side);
root.append(head, filters, notice, main, help);

const SHORTCUTS: [string, string][] = [
  ['j / ↓', 'next trajectory in the list'], ['k / ↑', 'previous trajectory'], ['Enter', 'open the selected trajectory'],
  ['n / →', 'next turn'], ['p / ←', 'previous turn'], ['x / Space', 'mark for compare (two at most)'], ['c', 'compare the two marked'],
  ['g', 'GRPO group of the selected trajectory'], ['d', 'back to the detail view'], ['/', 'search'], ['Home / End', 'first / last in the list'],
  ['PageUp / PageDown', 'a page up / down'], ['Esc', 'close this help, leave a field'], ['?', 'show or hide these shortcuts'],
];
help.append(h('h3', {}, 'Keyboard shortcuts'),
  h('table', {}, ...SHORTCUTS.map(([k, d]) => h('tr', {}, h('td', {}, ...k.split(' / ').flatMap((x, i) => (i ? [' / ', h('kbd', {}, x)] : [h('kbd', {}, x)]))), h('td', {}, d)))),
  h('p', { class: 'q-muted' }, 'Click a row to open it; click the column of a turn to step there. Press ? or Esc to close.'));

function toggleHelp(show?: boolean): void {
  const on = show ?? help.hidden;
  help.hidden = !on;
  if (!on) viewport.focus();
}

// ---------------------------------------------------------------------------------------------------------------
// Filters

const fmt = (n: number | null) => (n === null ? '–' : Number.isInteger(n) ? String(n) : n.toFixed(3).replace(/0+$/, '').replace(/\.$/, ''));

function sendFilter(): void {
  host.post({ type: 'filter', seq: ++seq, filter: app.filter as Record<string, unknown> });
  persist();
}

let textTimer: ReturnType<typeof setTimeout> | undefined;
function setFilter(patch: Partial<TrajectoryFilter>, debounce = false): void {
  Object.assign(app.filter, patch);
  for (const [k, v] of Object.entries(app.filter)) if (v === '' || v === null || v === undefined) delete (app.filter as Record<string, unknown>)[k];
  if (textTimer) clearTimeout(textTimer);
  if (debounce) textTimer = setTimeout(sendFilter, 150); else sendFilter();
}

function numberField(id: string, placeholder: string, value: number | null | undefined, onValue: (v: number | null) => void): HTMLElement {
  const el = textField({ id, placeholder, value: value === null || value === undefined ? '' : String(value) }, (v) => {
    const t = v.trim();
    const n = t === '' ? null : Number(t);
    el.classList.toggle('q-error', n !== null && !Number.isFinite(n));
    if (n === null || Number.isFinite(n)) onValue(n);
  });
  el.classList.add('r-num');
  return el;
}

function facetDropdown(id: string, anyLabel: string, values: { value: string; count: number }[], current: string | undefined, onChange: (v: string) => void): HTMLElement {
  const opts = [{ value: '', label: anyLabel }, ...values.map((v) => ({ value: v.value, label: `${v.value} (${v.count})` }))];
  if (current && !values.some((v) => v.value === current)) opts.push({ value: current, label: `${current} (0)` });
  return dropdown(opts, current ?? '', onChange, id);
}


/** Filter controls by id, each rebuilt only when what it shows changed, and never while it has the focus (scores
 *  arriving in batches change the counts while someone is typing a search or choosing from a dropdown). */
const slots = new Map<string, { wrap: HTMLElement; sig: string }>();
/** Bumped by Clear, so text and number fields are rebuilt empty. */
let clearCount = 0;

function slot(id: string, label: string, sig: string, make: () => HTMLElement): HTMLElement {
  let s = slots.get(id);
  if (!s) { s = { wrap: h('label', { class: 'r-f' }, label), sig: '\0' }; slots.set(id, s); }
  if (s.sig !== sig) {
    const old = s.wrap.querySelector<HTMLElement>(`#${id}`);
    const active = document.activeElement;
    const focused = !!old && !!active && (old === active || old.contains(active));
    if (!focused) {
      const el = make();
      if (old) old.replaceWith(el); else s.wrap.append(el);
      s.sig = sig;
    }
  }
  return s.wrap;
}

function renderFilters(): void {
  const f = facetsNow;
  if (!f) return;
  const v = f.verdicts;
  const sigOf = (...parts: unknown[]) => JSON.stringify([clearCount, ...parts]);
  const parts = [
    slot('f-verdict', 'Verdict', sigOf(v, app.filter.verdict), () => dropdown([
      { value: 'any', label: 'Any verdict' }, { value: 'correct', label: `Correct (${v.correct})` },
      { value: 'incorrect', label: `Incorrect (${v.incorrect})` }, { value: 'unscored', label: `Not scored (${v.unscored})` },
    ], app.filter.verdict ?? 'any', (x) => setFilter({ verdict: x as TrajectoryFilter['verdict'] }), 'f-verdict')),
    slot('f-protocol', 'Protocol', sigOf(f.protocols), () => facetDropdown('f-protocol', 'Any protocol', f.protocols, app.filter.protocol, (x) => setFilter({ protocol: x }))),
    slot('f-model', 'Model', sigOf(f.models), () => facetDropdown('f-model', 'Any model', f.models, app.filter.model, (x) => setFilter({ model: x }))),
    slot('f-db', 'Database', sigOf(f.dbs), () => facetDropdown('f-db', 'Any database', f.dbs, app.filter.db, (x) => setFilter({ db: x }))),
    slot('f-label', 'Label', sigOf(f.labels), () => facetDropdown('f-label', 'Any label', f.labels, app.filter.label, (x) => setFilter({ label: x }))),
    slot('f-turns-min', 'Turns ≥', sigOf(f.turns.min), () => numberField('f-turns-min', String(f.turns.min), app.filter.turnsMin, (n) => setFilter({ turnsMin: n }, true))),
    slot('f-turns-max', 'Turns ≤', sigOf(f.turns.max), () => numberField('f-turns-max', String(f.turns.max), app.filter.turnsMax, (n) => setFilter({ turnsMax: n }, true))),
    slot('f-reward-min', 'Reward ≥', sigOf(f.reward?.min), () => numberField('f-reward-min', f.reward ? fmt(f.reward.min) : 'min', app.filter.rewardMin, (n) => setFilter({ rewardMin: n }, true))),
    slot('f-reward-max', 'Reward ≤', sigOf(f.reward?.max), () => numberField('f-reward-max', f.reward ? fmt(f.reward.max) : 'max', app.filter.rewardMax, (n) => setFilter({ rewardMax: n }, true))),
    slot('f-search', 'Search', sigOf(), () => {
      const search = textField({ id: 'f-search', placeholder: 'question, SQL or id  ( / )', value: app.filter.text ?? '' }, (t) => setFilter({ text: t }, true));
      search.classList.add('r-search');
      return search;
    }),
    slot('f-clear', '', sigOf(), () => button('Clear', () => { app.filter = {}; clearCount++; renderFilters(); sendFilter(); }, { appearance: 'secondary', id: 'f-clear', title: 'Clear every filter' })),
  ];
  if (filters.childElementCount !== parts.length) filters.replaceChildren(...parts);
  panelSlot.replaceChildren(slot('f-panel', 'Reward panel', sigOf(panels, panelName), () => dropdown(panels.map((p) => ({ value: p, label: p === 'auto' ? 'auto (by protocol)' : p })), panelName,
    (p) => host.post({ type: 'setPanel', panel: p }), 'f-panel')));
}

// ---------------------------------------------------------------------------------------------------------------
// Virtualised list

function verdictMark(s: ListRow): HTMLElement {
  if (s.verdict === 'correct') return h('span', { class: 'q-ok', title: `correct (${s.verdictSource})` }, '✓');
  if (s.verdict === 'incorrect') return h('span', { class: 'q-error', title: `incorrect (${s.verdictSource})` }, '✗');
  return h('span', { class: 'q-muted', title: 'not scored' }, '·');
}

/** `openai:http://host/v1#qwen2.5-coder-7b` → `qwen2.5-coder-7b`; the full spec is the cell's tooltip. */
function shortModel(spec: string): string {
  const hash = spec.lastIndexOf('#');
  if (hash >= 0 && hash < spec.length - 1) return spec.slice(hash + 1);
  const parts = spec.split(/[/:]/).filter(Boolean);
  return parts[parts.length - 1] ?? spec;
}

function rowFor(i: number): HTMLElement {
  const s = summaries[keys[i]];
  const marked = app.markedIds.includes(s.id);
  const row = h('div', {
    class: `r-row${i === cursor ? ' r-cursor' : ''}${marked ? ' r-marked' : ''}`, role: 'option', 'aria-selected': i === cursor ? 'true' : 'false',
    'data-key': s.key, 'data-index': i, id: `r-row-${i}`, title: s.question,
  },
  h('span', { class: 'r-mark' }), verdictMark(s), h('span', { class: 'q-muted' }, String(s.line)), h('span', {}, s.question),
  h('span', { class: 'c-wide' }, s.protocol), h('span', { class: 'c-wider', title: s.model }, shortModel(s.model)), h('span', { class: 'c-wider', title: s.db }, s.db),
  h('span', { class: 'r-num-cell' }, String(s.turns)), h('span', { class: 'r-num-cell' }, fmt(s.reward)),
  h('span', { class: 'c-wide c-label', title: s.label ?? '' }, s.label ?? ''));
  row.style.top = `${i * ROW_H}px`;
  return row;
}

let rendered = '';
function renderRows(force = false): void {
  spacer.style.height = `${keys.length * ROW_H}px`;
  const top = viewport.scrollTop;
  const height = viewport.clientHeight || 600;
  const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
  const last = Math.min(keys.length, Math.ceil((top + height) / ROW_H) + OVERSCAN);
  const sig = `${first}:${last}:${cursor}`;
  if (!force && sig === rendered) return;
  rendered = sig;
  const rows: HTMLElement[] = [];
  for (let i = first; i < last; i++) rows.push(rowFor(i));
  spacer.replaceChildren(...rows);
  if (cursor >= 0) viewport.setAttribute('aria-activedescendant', `r-row-${cursor}`);
}
viewport.addEventListener('scroll', () => { renderRows(); schedulePersist(); });
new ResizeObserver(() => renderRows(true)).observe(viewport);
viewport.addEventListener('click', (e) => {
  const row = (e.target as HTMLElement).closest('.r-row') as HTMLElement | null;
  if (!row) return;
  moveTo(Number(row.dataset.index), true);
  viewport.focus();
});

let persistTimer: ReturnType<typeof setTimeout> | undefined;
function schedulePersist(): void {
  if (persistTimer) clearTimeout(persistTimer);
  persistTimer = setTimeout(persist, 200);
}

function renderCounts(): void {
  counts.textContent = total === 0 ? '' : `${keys.length.toLocaleString()} of ${total.toLocaleString()} trajectories`;
  const s = scoring;
  const of = `${s.done.toLocaleString()}/${s.total.toLocaleString()}`;
  scoreStatus.textContent = s.running ? `scoring ${of}…` : s.total ? `${of} scored` : '';
  scoreButton.textContent = s.running ? 'Stop scoring' : 'Score all';
  setDisabled(scoreButton, total === 0 || (!s.running && s.done >= s.total));
}

function renderNotice(): void {
  const parts: Node[] = [];
  if (message) parts.push(h('div', { class: message.error ? 'q-error' : 'q-muted', role: message.error ? 'alert' : 'status' }, message.text));
  if (invalid.length) {
    parts.push(h('details', {}, h('summary', { class: 'q-warn' }, `${invalid.length} invalid line(s) skipped`),
      h('pre', {}, invalid.slice(0, 200).map((b) => b.message).join('\n') + (invalid.length > 200 ? `\n… and ${invalid.length - 200} more` : ''))));
  }
  if (truncated) parts.push(h('div', { class: 'q-warn' }, truncated));
  notice.replaceChildren(...parts);
}

let selectTimer: ReturnType<typeof setTimeout> | undefined;
/** Moves the list cursor; the trajectory loads after a short pause so holding j does not fetch every record. */
function moveTo(i: number, now = false): void {
  if (keys.length === 0) return;
  cursor = Math.max(0, Math.min(keys.length - 1, i));
  const s = summaries[keys[cursor]];
  app.selectedId = s.id;
  const top = cursor * ROW_H;
  if (top < viewport.scrollTop) viewport.scrollTop = top;
  else if (top + ROW_H > viewport.scrollTop + viewport.clientHeight) viewport.scrollTop = top + ROW_H - viewport.clientHeight;
  renderRows(true);
  if (selectTimer) clearTimeout(selectTimer);
  const open = () => { app.view = 'detail'; app.turn = 0; host.post({ type: 'select', key: s.key }); persist(); };
  if (now) open(); else selectTimer = setTimeout(open, 150);
}

function toggleMark(): void {
  if (cursor < 0) return;
  const id = summaries[keys[cursor]].id;
  const at = app.markedIds.indexOf(id);
  if (at >= 0) app.markedIds.splice(at, 1);
  else { app.markedIds.push(id); if (app.markedIds.length > 2) app.markedIds.shift(); }
  renderRows(true);
  persist();
}

function keyOfId(id: string): number | undefined {
  return summaries.find((s) => s.id === id)?.key;
}

function cancelPendingSelect(): void {
  if (selectTimer) clearTimeout(selectTimer);
  selectTimer = undefined;
}

function openCompare(): void {
  cancelPendingSelect();
  const ks = app.markedIds.map(keyOfId).filter((k): k is number => k !== undefined);
  if (ks.length !== 2) { say('Mark two trajectories with x (or Space) to compare them.'); return; }
  app.view = 'compare';
  app.turn = 0;
  host.post({ type: 'compare', a: ks[0], b: ks[1] });
  persist();
}

function openGroup(): void {
  cancelPendingSelect();
  if (cursor < 0) { say('Select a trajectory first.'); return; }
  app.view = 'group';
  app.turn = 0;
  host.post({ type: 'group', key: summaries[keys[cursor]].key });
  persist();
}

function say(text: string, error = false): void {
  message = { text, error };
  renderNotice();
}

// ---------------------------------------------------------------------------------------------------------------
// Detail: one trajectory turn by turn

const REASONS: Record<string, string> = {
  match: 'result matches the gold', values: 'wrong values', 'row-count': 'wrong number of rows', columns: 'wrong columns',
  order: 'wrong row order', 'pred-error': 'the SQL fails', 'pred-timeout': 'the SQL timed out', 'gold-error': 'the gold SQL fails',
  'gold-timeout': 'the gold SQL timed out', 'missing-prediction': 'no final SQL', 'empty-prediction': 'empty final SQL',
};
/** The evaluator's reason code in words (the code stays in the tooltip). */
const reasonText = (r: string) => REASONS[r] ?? r;

function execLine(t: TrajectoryTurn): HTMLElement | null {
  const e = t.exec;
  if (!e) return null;
  if (!e.ok) return h('div', { class: 'q-error', role: 'note' }, `✗ ${e.errorClass ?? 'error'}: ${e.error ?? 'failed'}  (${e.ms.toFixed(0)} ms)`);
  return h('div', { class: 'r-meta' }, h('span', { class: 'q-ok' }, '✓ ran'), h('span', {}, `${e.rowCount} row${e.rowCount === 1 ? '' : 's'}${e.truncated ? ' (truncated)' : ''}`),
    h('span', {}, `${e.ms.toFixed(1)} ms`), e.columns.length ? h('span', { title: e.columns.join(', ') }, `columns: ${e.columns.join(', ')}`) : null);
}

/** The observation the model saw: a pipe/df table or text, shown as preformatted text (it is what the model read). */
function observationOf(t: TrajectoryTurn): HTMLElement | null {
  const text = t.observations.map((o) => o.content).join('\n');
  if (!text) return null;
  return h('details', { open: true }, h('summary', {}, `observation (${t.observations.length} message${t.observations.length === 1 ? '' : 's'})`), h('pre', {}, text));
}

function reasoningOf(t: TrajectoryTurn): HTMLElement {
  const thought = t.action.thought ?? t.assistant;
  return h('details', {}, h('summary', {}, t.action.thought ? 'reasoning' : 'model output'), h('pre', {}, thought || '(empty)'));
}

function turnCard(t: TrajectoryTurn, current: boolean, onClick?: () => void): HTMLElement {
  const card = h('div', { class: `q-card r-turn${current ? ' r-current' : ''}`, 'data-turn': t.index },
    h('div', { class: 'r-meta' },
      h('strong', {}, `Turn ${t.index + 1}`), tag(t.action.kind), h('span', {}, `finish: ${t.finishReason}`),
      h('span', { title: 'prompt / completion tokens' }, `tokens ${t.usage.promptTokens} / ${t.usage.completionTokens}${t.usageEstimated ? ' (est.)' : ''}`),
      h('span', {}, `model ${t.timings.modelMs.toFixed(0)} ms · env ${t.timings.envMs.toFixed(0)} ms`),
      t.action.mdp.length ? h('span', {}, t.action.mdp.join(' → ')) : null,
      t.action.verify?.exec ? h('span', { class: t.action.verify.exec === 'pass' ? 'q-ok' : 'q-warn' }, `verify: ${t.action.verify.exec}`) : null),
    reasoningOf(t),
    t.action.sql ? highlightSql(t.action.sql) : h('div', { class: 'q-muted' }, 'no SQL this turn'),
    execLine(t),
    ...t.action.problems.map((p) => h('div', { class: 'q-warn' }, `⚠ ${p}`)),
    observationOf(t));
  if (onClick) card.addEventListener('click', onClick);
  return card;
}

function termsTable(e: Explanation): HTMLElement {
  const maxAbs = Math.max(1e-9, ...e.terms.map((t) => Math.abs(t.contribution)));
  return h('table', { class: 'r-terms', 'aria-label': `reward terms of panel ${e.panel}` },
    h('thead', {}, h('tr', {}, h('th', {}, 'term'), h('th', {}, 'value'), h('th', {}, 'weight'), h('th', {}, 'contribution'), h('th', {}, 'why'))),
    h('tbody', {}, ...e.terms.map((t) => {
      const bar = h('span', { class: `r-bar${t.contribution < 0 ? ' r-neg' : ''}` });
      bar.style.width = `${Math.round((Math.abs(t.contribution) / maxAbs) * 60)}px`;
      return h('tr', {}, h('td', {}, t.name), h('td', { class: 'r-num-cell' }, fmt(t.value)), h('td', { class: 'r-num-cell' }, fmt(t.weight)),
        h('td', {}, bar, ' ', fmt(t.contribution)), h('td', {}, t.explanation));
    })));
}

function rewardSection(): HTMLElement {
  if (!detail) return h('div');
  if (detail.explainError) return h('div', { class: 'q-card', id: 'r-reward' }, h('strong', {}, 'Reward'), h('div', { class: 'q-muted' }, `not scored: ${detail.explainError}`));
  const e = detail.explanation;
  if (!e) return h('div', { class: 'q-card q-muted', id: 'r-reward' }, 'Reward: computing…');
  return h('div', { class: 'q-card', id: 'r-reward' },
    h('div', { class: 'r-meta' }, h('strong', {}, `Reward (${e.panel})`), badge(fmt(e.total)),
      h('span', { class: e.correct ? 'q-ok' : 'q-error', title: e.reason }, e.correct ? '✓ result matches the gold' : `✗ ${reasonText(e.reason)}${e.detail ? `: ${e.detail}` : ''}`)),
    termsTable(e));
}

function renderDetail(): void {
  if (!detail) { side.replaceChildren(h('div', { class: 'r-empty' }, total ? 'Select a trajectory (click, or j/k then Enter).' : '')); return; }
  const r = detail.record;
  const s = summaries[detail.key];
  app.turn = Math.max(0, Math.min(app.turn, Math.max(0, r.turns.length - 1)));
  main.classList.remove('r-columns');
  resetScroll(`detail:${detail.key}`);
  const budget = r.protocol.budget ?? (typeof r.protocol.config.maxTurns === 'number' ? r.protocol.config.maxTurns : null);
  side.replaceChildren(
    h('div', { class: 'q-card', id: 'r-detail' },
      h('div', { class: 'r-meta' }, h('strong', {}, r.id), s ? verdictMark(s) : null, h('span', {}, `sample ${r.sample} of group ${r.groupId}`),
        h('span', {}, r.protocol.name), h('span', {}, r.model.spec), h('span', {}, r.task.db.id ?? r.task.db.path), h('span', {}, `end: ${r.end}`),
        h('span', {}, `${r.turns.length}${budget ? `/${budget}` : ''} turns`), h('span', {}, `tokens ${r.usage.promptTokens} / ${r.usage.completionTokens}`),
        h('span', {}, `${(r.timings.totalMs / 1000).toFixed(2)} s`), s?.label ? tag(s.label) : null),
      h('h3', {}, r.task.question),
      r.task.evidence ? h('div', { class: 'q-muted' }, `evidence: ${r.task.evidence}`) : null,
      r.error ? h('div', { class: 'q-error', role: 'alert' }, `episode error: ${r.error}`) : null,
      h('div', {}, h('strong', {}, 'Final SQL'), ' ', r.finalSql ? button('Open in editor', () => host.post({ type: 'openSql', sql: r.finalSql! }), { appearance: 'secondary' }) : null),
      r.finalSql ? highlightSql(r.finalSql) : h('div', { class: 'q-muted' }, 'no final SQL'),
      r.task.gold ? h('details', {}, h('summary', {}, 'gold SQL'), highlightSql(r.task.gold)) : null,
      r.prompt.length ? h('details', {}, h('summary', {}, `prompt (${r.prompt.length} messages)`), ...r.prompt.map((m) => h('div', {}, h('strong', {}, m.role), h('pre', {}, m.content)))) : null),
    rewardSection(),
    h('div', { class: 'r-meta' }, h('span', {}, `Turn ${r.turns.length ? app.turn + 1 : 0} of ${r.turns.length}`), h('span', { class: 'q-muted' }, 'n/p or ←/→ to step')),
    ...r.turns.map((t) => turnCard(t, t.index === app.turn, () => { app.turn = t.index; markTurn(); })));
  markTurn(false);
}

/** Highlights the current turn (in whichever view) and scrolls it into view. */
function markTurn(scroll = true): void {
  let target: HTMLElement | null = null;
  for (const el of Array.from(side.querySelectorAll<HTMLElement>('[data-turn]'))) {
    const on = Number(el.dataset.turn) === app.turn;
    el.classList.toggle('r-current', on);
    if (on && !target) target = el;
  }
  if (scroll && target) target.scrollIntoView({ block: 'nearest' });
  persist();
}

// ---------------------------------------------------------------------------------------------------------------
// Compare: two trajectories, turns aligned by index

function diffView(parts: DiffPart[], which: 'a' | 'b'): HTMLElement {
  const pre = h('pre', { class: 'q-sql' });
  for (const p of parts) {
    const text = which === 'a' ? p.a : p.b;
    if (!text) continue;
    if (p.op === 'same') pre.append(text);
    else pre.append(h('span', { class: p.op === 'removed' ? 'r-del' : 'r-add' }, text));
  }
  return pre;
}

function smallTurn(t: TrajectoryTurn | null, index: number): HTMLElement {
  if (!t) return h('div', { class: 'r-cell q-muted', 'data-turn': index }, '—');
  return h('div', { class: 'r-cell r-turn', 'data-turn': index }, h('div', { class: 'r-meta' }, tag(t.action.kind), `tokens ${t.usage.completionTokens}`),
    t.action.sql ? highlightSql(t.action.sql) : h('div', { class: 'q-muted' }, 'no SQL'), execLine(t),
    ...t.action.problems.map((p) => h('div', { class: 'q-warn' }, `⚠ ${p}`)));
}

function headerCell(key: number, r: TrajectoryRecord): HTMLElement {
  const s = summaries[key];
  return h('div', { class: 'r-cell' }, h('div', { class: 'r-meta' }, h('strong', {}, r.id), s ? verdictMark(s) : null, h('span', {}, `reward ${fmt(s?.reward ?? null)}`),
    h('span', {}, r.protocol.name), h('span', {}, r.model.spec), h('span', {}, `${r.turns.length} turns`), h('span', {}, `end: ${r.end}`)), h('div', {}, r.task.question));
}

function renderCompare(): void {
  if (!compare) { side.replaceChildren(h('div', { class: 'r-empty' }, 'Loading the comparison…')); return; }
  const { a, b, diff } = compare;
  main.classList.add('r-columns');
  resetScroll(`compare:${a.key}:${b.key}`);
  const same = diff.every((p) => p.op === 'same');
  const cols = h('div', { class: 'r-cols', id: 'r-compare-view' });
  cols.style.gridTemplateColumns = '1fr 1fr';
  cols.append(headerCell(a.key, a.record), headerCell(b.key, b.record),
    h('div', { class: 'r-rowhead' }, same ? 'Final SQL (same up to spacing and case)' : 'Final SQL (differences highlighted)'),
    h('div', { class: 'r-cell' }, diffView(diff, 'a')), h('div', { class: 'r-cell' }, diffView(diff, 'b')));
  for (const row of alignTurns(a.record.turns, b.record.turns)) {
    cols.append(h('div', { class: 'r-rowhead' }, `Turn ${row.index + 1}`), smallTurn(row.a, row.index), smallTurn(row.b, row.index));
  }
  side.replaceChildren(h('div', { class: 'r-meta' }, h('strong', {}, 'Compare'), button('Back to detail (d)', () => backToDetail(), { appearance: 'secondary' })), cols);
  markTurn(false);
}

// ---------------------------------------------------------------------------------------------------------------
// Group: all samples of one question in columns

function renderGroup(): void {
  if (!group) { side.replaceChildren(h('div', { class: 'r-empty' }, 'Loading the group…')); return; }
  const { members, stats } = group;
  main.classList.add('r-columns');
  resetScroll(`group:${group.groupId}`);
  const cols = h('div', { class: 'r-cols', id: 'r-group-view' });
  cols.style.gridTemplateColumns = `repeat(${members.length}, minmax(240px, 1fr))`;
  for (const m of members) {
    const e = m.explanation;
    cols.append(h('div', { class: 'r-cell', 'data-key': m.key },
      h('div', { class: 'r-meta' }, h('strong', {}, `sample ${m.record.sample}`), e ? h('span', { class: e.correct ? 'q-ok' : 'q-error', title: e.reason }, e.correct ? '✓ correct' : `✗ ${reasonText(e.reason)}`) : h('span', { class: 'q-muted' }, 'not scored')),
      h('div', { class: 'r-meta' }, h('span', {}, `reward ${e ? fmt(e.total) : '–'}`), h('span', {}, `advantage ${m.advantage === null ? '–' : fmt(m.advantage)}`), h('span', {}, `${m.record.turns.length} turns, end: ${m.record.end}`)),
      m.unscored ? h('div', { class: 'q-muted' }, m.unscored) : null));
  }
  const turns = Math.max(0, ...members.map((m) => m.record.turns.length));
  for (let i = 0; i < turns; i++) {
    cols.append(h('div', { class: 'r-rowhead' }, `Turn ${i + 1}`));
    for (const m of members) {
      const t = m.record.turns[i] ?? null;
      const cell = smallTurn(t, i);
      const obs = t ? t.observations.map((o) => o.content).join('\n') : '';
      if (obs) cell.append(h('details', {}, h('summary', {}, 'result'), h('pre', {}, obs)));
      cols.append(cell);
    }
  }
  cols.append(h('div', { class: 'r-rowhead' }, 'Final SQL'));
  for (const m of members) cols.append(h('div', { class: 'r-cell' }, m.record.finalSql ? highlightSql(m.record.finalSql) : h('span', { class: 'q-muted' }, 'none')));
  cols.append(h('div', { class: 'r-rowhead' }, `Reward terms (${group.panel})`));
  for (const m of members) cols.append(h('div', { class: 'r-cell' }, m.explanation ? termsTable(m.explanation) : h('span', { class: 'q-muted' }, m.unscored ?? 'not scored')));
  const q = members[0]?.record.task.question ?? '';
  side.replaceChildren(
    h('div', { class: 'q-card', id: 'r-group-stats' },
      h('div', { class: 'r-meta' }, h('strong', {}, `Group ${group.groupId}`), h('span', {}, `${stats.size} samples`), h('span', {}, `${stats.correct}/${stats.size} correct`),
        h('span', {}, `mean reward ${fmt(stats.mean)}`), h('span', {}, `std ${fmt(stats.std)}`), h('span', {}, `${stats.scored} scored`),
        stats.zeroVariance ? h('span', { class: 'q-warn', title: 'every sample got the same reward: GRPO learns nothing from this group' }, '⚠ zero variance') : null,
        button('Back to detail (d)', () => backToDetail(), { appearance: 'secondary' })),
      h('div', {}, q)),
    ...(members.length < 2 ? [h('div', { class: 'q-muted' }, 'This trajectory is alone in its group (no other samples share its groupId).')] : []),
    cols);
  markTurn(false);
}

function backToDetail(): void {
  app.view = 'detail';
  const key = cursor >= 0 ? keys[cursor] : undefined;
  if (key !== undefined && detail?.key !== key) host.post({ type: 'select', key });
  renderSide();
  persist();
}

let shownView = '';
/** A different view (or another trajectory) starts at the top of the pane, not where the last one was scrolled. */
function resetScroll(what: string): void {
  if (what !== shownView) side.scrollTop = 0;
  shownView = what;
}

function renderSide(): void {
  main.classList.toggle('r-columns', app.view !== 'detail');
  if (app.view === 'compare') renderCompare();
  else if (app.view === 'group') renderGroup();
  else renderDetail();
}

function turnCount(): number {
  if (app.view === 'compare' && compare) return Math.max(compare.a.record.turns.length, compare.b.record.turns.length);
  if (app.view === 'group' && group) return Math.max(0, ...group.members.map((m) => m.record.turns.length));
  return detail?.record.turns.length ?? 0;
}

function stepTurn(d: number): void {
  const n = turnCount();
  if (n === 0) return;
  app.turn = Math.max(0, Math.min(n - 1, app.turn + d));
  markTurn();
}

// ---------------------------------------------------------------------------------------------------------------
// Keyboard

function inField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t?.closest?.('vscode-text-field, vscode-text-area, vscode-dropdown, input, textarea, select');
}

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape') {
    if (!help.hidden) { toggleHelp(false); e.preventDefault(); return; }
    if (inField(e)) { viewport.focus(); e.preventDefault(); }
    return;
  }
  if (inField(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  const page = Math.max(1, Math.floor(viewport.clientHeight / ROW_H) - 1);
  const handled = (() => {
    switch (e.key) {
      case 'j': case 'ArrowDown': moveTo(cursor + 1); return true;
      case 'k': case 'ArrowUp': moveTo(cursor - 1); return true;
      case 'PageDown': moveTo(cursor + page); return true;
      case 'PageUp': moveTo(cursor - page); return true;
      case 'Home': moveTo(0); return true;
      case 'End': moveTo(keys.length - 1); return true;
      case 'Enter': if (cursor >= 0) moveTo(cursor, true); return true;
      case 'n': case 'ArrowRight': stepTurn(1); return true;
      case 'p': case 'ArrowLeft': stepTurn(-1); return true;
      case 'x': case ' ': toggleMark(); return true;
      case 'c': openCompare(); return true;
      case 'g': openGroup(); return true;
      case 'd': backToDetail(); return true;
      case '?': toggleHelp(); return true;
      case '/': (document.getElementById('f-search') as HTMLElement | null)?.focus(); return true;
      default: return false;
    }
  })();
  if (handled) e.preventDefault();
});

// ---------------------------------------------------------------------------------------------------------------
// Messages from the host

host.onMessage((m) => {
  switch (m.type) {
    case 'loading':
      title.textContent = `Replay: ${m.label}`;
      say(`Reading ${m.file}…`);
      return;
    case 'list': {
      const sameFile = app.file === m.file;
      summaries = unpackRows(m.rows);
      fileLabel = m.label;
      title.textContent = `Replay: ${fileLabel}`;
      title.setAttribute('title', m.file);
      invalid = m.invalid;
      truncated = m.truncated;
      panels = m.panels;
      panelName = m.panel;
      message = null;
      if (!sameFile) {
        app.file = m.file;
        app.selectedId = null;
        app.markedIds = [];
        app.view = 'detail';
        app.turn = 0;
        app.scrollTop = 0;
        detail = null; compare = null; group = null;
        restorePending = false;
      } else if (app.selectedId) {
        restorePending = true;
      }
      renderNotice();
      sendFilter();
      return;
    }
    case 'view': {
      if (m.seq < seq) return; // an answer to a filter the user has already changed
      const selectedId = app.selectedId;
      keys = m.keys;
      total = m.total;
      facetsNow = m.facets;
      renderFilters();
      const at = selectedId === null ? -1 : keys.findIndex((k) => summaries[k].id === selectedId);
      cursor = at >= 0 ? at : (keys.length ? Math.min(Math.max(cursor, 0), keys.length - 1) : -1);
      if (restorePending) {
        restorePending = false;
        viewport.scrollTop = app.scrollTop;
        // The trajectory that was open comes back even when the filter hides its row.
        const key = selectedId === null ? undefined : keyOfId(selectedId);
        if (app.view === 'compare') openCompare();
        else if (key !== undefined && app.view === 'group') host.post({ type: 'group', key });
        else if (key !== undefined) { restoreTurn = app.turn; host.post({ type: 'select', key }); }
      }
      renderRows(true);
      renderCounts();
      if (keys.length === 0 && total > 0) side.replaceChildren(h('div', { class: 'r-empty' }, 'No trajectory matches these filters.'));
      else if (!detail && !compare && !group) renderSide();
      return;
    }
    case 'scores': {
      for (const u of m.updates) {
        const s = summaries[u.key];
        if (s) { s.verdict = u.verdict; s.reward = u.reward; if (u.verdict && s.verdictSource === null) s.verdictSource = 'computed'; }
      }
      scoring = { done: m.done, total: m.total, running: m.running };
      renderCounts();
      if (m.updates.length) renderRows(true);
      return;
    }
    case 'detail': {
      detail = { key: m.key, record: m.record, explanation: null, explainError: null };
      app.turn = m.turn ?? restoreTurn ?? 0;
      restoreTurn = null;
      const at = keys.indexOf(m.key);
      if (at >= 0 && at !== cursor) { cursor = at; renderRows(true); }
      app.selectedId = m.record.id;
      // A detail the user has already left (c or g pressed while it loaded) waits for "d".
      if (app.view === 'detail') renderDetail();
      persist();
      return;
    }
    case 'explanation':
      if (detail && detail.key === m.key) {
        detail.explanation = m.explanation;
        detail.explainError = m.error;
        if (app.view === 'detail') {
          const old = document.getElementById('r-reward');
          if (old) old.replaceWith(rewardSection()); else renderDetail();
        }
      }
      return;
    case 'compare':
      compare = m;
      if (app.view === 'compare') renderCompare();
      return;
    case 'group':
      group = m;
      if (app.view === 'group') renderGroup();
      return;
    case 'error':
      say(m.message, true);
      return;
    case 'empty':
      side.replaceChildren(h('div', { class: 'r-empty' }, m.message));
      return;
  }
});

renderFilters();
renderCounts();
renderSide();
viewport.focus();
host.post({ type: 'ready' });
