// Query Results: the statement a user ran from a SQL document, against which database, and its whole result in the
// shared paged grid (paging, sorting and filters run in SQLite through the sandbox), or its error. It keeps the
// statement, database and page shown as its webview state, from which the host runs it again after a window reload.
// Plan (Alt+P) toggles the statement's query plan, drawn as a tree with its warnings above the result.
import { connectHost } from '../shared/host';
import { button, h, progressRing, registerComponents } from '../shared/components';
import { pagedGrid } from '../shared/pagedGrid';
import { highlightSql } from '../shared/sqlHighlight';
import { planView } from '../shared/planTree';
import { failureText, type ResultsAppState, type ToApp, type ToHost } from '../../src/protocol/results';

registerComponents();
const host = connectHost<ToHost, ToApp, ResultsAppState>();
let saved: ResultsAppState | null = null;
const app = document.getElementById('app')!;
const title = h('h2', { id: 'title' }, 'Query Results');
const rerun = button('Run Again', () => host.post({ type: 'rerun' }), {
  appearance: 'secondary',
  id: 'rerun',
  title: 'Run the statement again (F5)',
});
const planButton = button('Plan', togglePlan, {
  appearance: 'secondary',
  id: 'plan-toggle',
  title: 'Show or hide the query plan: how SQLite will run the statement (Alt+P)',
});
planButton.setAttribute('aria-pressed', 'false');
planButton.setAttribute('aria-controls', 'plan-box');
const sqlBox = h('div', { id: 'sql' });
const planBox = h('div', { id: 'plan-box', 'aria-live': 'polite' });
planBox.hidden = true;
const body = h('div', { id: 'body', 'aria-live': 'polite' });
app.append(h('div', { class: 'q-row' }, title, rerun, planButton), sqlBox, planBox, body);
let currentSql: string | null = null;

/** Shows the plan (asking the host for it) or hides it. */
function togglePlan(): void {
  const show = planBox.hidden;
  planBox.hidden = !show;
  planButton.setAttribute('aria-pressed', String(show));
  if (show) requestPlan();
}
function requestPlan(): void {
  planBox.replaceChildren(h('div', { class: 'q-row q-muted' }, progressRing(), h('span', {}, 'Planning…')));
  host.post({ type: 'plan' });
}
let grid = pagedGrid((m) => host.post(m), { id: 'results-grid' });

host.onMessage((m) => {
  if (m.type === 'plan') {
    if (!planBox.hidden && m.sql === currentSql) planBox.replaceChildren(planView(m.outcome, 'plan'));
    return;
  }
  if (m.type === 'running' || m.type === 'failed' || m.type === 'shown') {
    // Another statement: a plan on show is made again for it.
    const changed = currentSql !== m.sql;
    currentSql = m.sql;
    if (changed && !planBox.hidden) requestPlan();
    title.textContent = `Query Results · ${m.db}`;
    sqlBox.replaceChildren(highlightSql(m.sql));
    if (saved?.path !== m.path || saved.sql !== m.sql) saved = { path: m.path, sql: m.sql };
    host.saveState(saved);
  }
  if (m.type === 'page' && saved) {
    const p = m.page;
    const sort = p.sortColumn === null ? {} : { sortColumn: p.sortColumn, descending: p.descending };
    saved = { ...saved, view: { offset: p.offset, limit: p.limit, ...sort, filters: p.filters } };
    host.saveState(saved);
  }
  if (m.type === 'running') {
    grid = pagedGrid((x) => host.post(x), { id: 'results-grid' });
    body.replaceChildren(h('div', { class: 'q-row' }, progressRing(), h('span', {}, 'Running…')));
  } else if (m.type === 'failed') {
    body.replaceChildren(
      h('div', { class: 'q-error', role: 'alert', id: 'error' }, failureText(m.errorClass, m.message)),
    );
  } else if (m.type === 'shown') {
    if (grid.element.parentElement !== body) body.replaceChildren(grid.element);
  } else {
    if (grid.element.parentElement !== body) body.replaceChildren(grid.element);
    grid.receive(m);
  }
});
window.addEventListener('keydown', (e) => {
  if (e.key === 'F5') {
    e.preventDefault();
    host.post({ type: 'rerun' });
  } else if (e.altKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyP') {
    e.preventDefault();
    togglePlan();
  }
});
host.post({ type: 'ready' });
