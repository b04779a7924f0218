// The table preview: the whole table a page at a time in the shared paged grid (the host runs each page, sort and
// filter through the sandbox). The app keeps only which table it shows, so the host can run the preview again after
// a window reload.
import { connectHost } from '../shared/host';
import { button, h, progressRing, registerComponents } from '../shared/components';
import { pagedGrid } from '../shared/pagedGrid';
import type { PreviewAppState, ToApp, ToHost } from '../../src/protocol/preview';

registerComponents();
const host = connectHost<ToHost, ToApp, PreviewAppState>();
const app = document.getElementById('app')!;
const title = h('h2', { id: 'title' }, 'Preview');
const refresh = button('Refresh', () => host.post({ type: 'refresh' }), {
  appearance: 'secondary',
  id: 'refresh',
  title: 'Run the preview query again (F5)',
});
const body = h('div', { id: 'body', 'aria-live': 'polite' });
app.append(
  h('div', { class: 'q-row' }, title, refresh),
  body,
  h(
    'p',
    { class: 'q-muted', id: 'shortcuts' },
    'F5 refresh · in the grid: PageUp/PageDown pages, Home/End first/last page, ' +
      'Enter on a header sorts the whole table',
  ),
);
const grid = pagedGrid((m) => host.post(m), { id: 'preview-grid' });

host.onMessage((m) => {
  if (m.type === 'loading' || m.type === 'error' || m.type === 'shown') {
    host.saveState({ path: m.path, table: m.table });
    title.textContent = `${m.table} · ${m.db}`;
  }
  if (m.type === 'loading') {
    body.replaceChildren(h('div', { class: 'q-row' }, progressRing(), h('span', {}, 'Running the preview query…')));
  } else if (m.type === 'error') {
    body.replaceChildren(h('div', { class: 'q-error', role: 'alert', id: 'error' }, m.message));
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
    host.post({ type: 'refresh' });
  }
});
host.post({ type: 'ready' });
