// The table preview: the first rows of one table in the shared result grid (paging, sort, copy, export). The host
// owns the data and sends it again whenever the panel is shown; the app keeps only which table it shows, so the host
// can run the preview again after a window reload.
import { connectHost } from '../shared/host';
import { button, h, progressRing, registerComponents } from '../shared/components';
import { resultGrid } from '../shared/resultGrid';
import type { PreviewAppState, PreviewData, ToApp, ToHost } from '../../src/protocol/preview';

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
    'F5 refresh · in the grid: PageUp/PageDown pages, Home/End first/last page, Enter on a header sorts',
  ),
);

function show(d: PreviewData): void {
  title.textContent = `${d.table} · ${d.db}`;
  const shown = d.rows.length;
  const note =
    d.truncated || d.rowCount > shown
      ? `first ${shown.toLocaleString('en-US')} of ${d.rowCount.toLocaleString('en-US')} rows`
      : `${shown.toLocaleString('en-US')} row${shown === 1 ? '' : 's'}`;
  const grid = resultGrid(d.columns, d.rows, {
    id: 'preview-grid',
    pageSize: 100,
    note: `${note} · ${Math.round(d.ms)} ms`,
    onCopy: (text) => host.post({ type: 'copyText', text }),
    onExport: (format) => host.post({ type: 'export', format }),
  });
  body.replaceChildren(grid.element);
}

host.onMessage((m) => {
  const target = m.type === 'show' ? m.data : m;
  host.saveState({ path: target.path, table: target.table });
  if (m.type === 'loading') {
    title.textContent = `${m.table} · ${m.db}`;
    body.replaceChildren(h('div', { class: 'q-row' }, progressRing(), h('span', {}, 'Running the preview query…')));
  } else if (m.type === 'show') {
    show(m.data);
  } else if (m.type === 'error') {
    title.textContent = `${m.table} · ${m.db}`;
    body.replaceChildren(h('div', { class: 'q-error', role: 'alert', id: 'error' }, m.message));
  }
});
window.addEventListener('keydown', (e) => {
  if (e.key === 'F5') {
    e.preventDefault();
    host.post({ type: 'refresh' });
  }
});
host.post({ type: 'ready' });
