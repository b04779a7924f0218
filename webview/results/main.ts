// Query Results: the statement a user ran from a SQL document, against which database, and its whole result in the
// shared paged grid (paging, sorting and filters run in SQLite through the sandbox), or its error. It keeps the
// statement, database and page shown as its webview state, from which the host runs it again after a window reload.
import { connectHost } from '../shared/host';
import { button, h, progressRing, registerComponents } from '../shared/components';
import { pagedGrid } from '../shared/pagedGrid';
import { highlightSql } from '../shared/sqlHighlight';
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
const sqlBox = h('div', { id: 'sql' });
const body = h('div', { id: 'body', 'aria-live': 'polite' });
app.append(h('div', { class: 'q-row' }, title, rerun), sqlBox, body);
let grid = pagedGrid((m) => host.post(m), { id: 'results-grid' });

host.onMessage((m) => {
  if (m.type === 'running' || m.type === 'failed' || m.type === 'shown') {
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
  }
});
host.post({ type: 'ready' });
