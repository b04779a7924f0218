// A result grid for query results in any Quarry webview: one page of a plain DOM table at a time (so 10,000 rows cost
// what 100 do), sort by a column header (click, Enter or Space; again to reverse), paging, copy as TSV, export
// CSV/JSON through the host. Keyboard: PageDown/PageUp next/previous page, Home/End first/last page (focus in grid).
import type { RowOrder, WireCell } from '../../src/core/db/resultExport';
import { sortedRowIndices, toTsv } from '../../src/core/db/resultExport';
import { button, h, setDisabled } from './components';
import { cellDisplay, clippedText } from './cellDisplay';

export interface GridOptions {
  pageSize?: number;
  /** Copies text to the clipboard (the host does it); the grid passes its rows as TSV in the current order. */
  onCopy?: (text: string) => void;
  /** Asks the host to export the whole result, in the order shown (null: the query's order). */
  onExport?: (format: 'csv' | 'json', order: RowOrder | null) => void;
  /** Said above the table, e.g. "first 10,000 of 12,345 rows". */
  note?: string;
  /** Id prefix for elements a test or a label needs to find. */
  id?: string;
}

export interface ResultGrid {
  element: HTMLElement;
  /** Rows in the order shown (sorted), for tests and copy. */
  orderedRows(): WireCell[][];
}

export function resultGrid(columns: string[], rows: WireCell[][], opts: GridOptions = {}): ResultGrid {
  const pageSize = Math.max(1, opts.pageSize ?? 100);
  let order: number[] = rows.map((_, i) => i);
  let sortCol = -1;
  let descending = false;
  let page = 0;
  const pages = () => Math.max(1, Math.ceil(rows.length / pageSize));

  const root = h('div', { class: 'q-grid', tabindex: 0, id: opts.id, 'aria-label': `Result: ${rows.length} rows` });
  const status = h('span', { class: 'q-muted', 'aria-live': 'polite' });
  const first = button('«', () => go(0), { appearance: 'icon', title: 'First page (Home)' });
  const prev = button('‹', () => go(page - 1), { appearance: 'icon', title: 'Previous page (PageUp)' });
  const next = button('›', () => go(page + 1), { appearance: 'icon', title: 'Next page (PageDown)' });
  const last = button('»', () => go(pages() - 1), { appearance: 'icon', title: 'Last page (End)' });
  const tools = h('div', { class: 'q-row' }, first, prev, status, next, last);
  if (opts.onCopy) {
    const copy = opts.onCopy;
    tools.append(
      button('Copy', () => copy(toTsv(columns, orderedRows())), {
        appearance: 'secondary',
        title: 'Copy all rows as tab-separated text, in the order shown',
      }),
    );
  }
  if (opts.onExport) {
    const exp = opts.onExport;
    const current = (): RowOrder | null => (sortCol < 0 ? null : { column: sortCol, descending });
    tools.append(
      button('Export CSV…', () => exp('csv', current()), {
        appearance: 'secondary',
        title: 'Export all rows as CSV, in the order shown',
      }),
      button('Export JSON…', () => exp('json', current()), {
        appearance: 'secondary',
        title: 'Export all rows as JSON, in the order shown',
      }),
    );
  }
  if (opts.note) tools.append(h('span', { class: 'q-warn' }, opts.note));

  const headCells = columns.map((c, i) => {
    const th = h(
      'th',
      { scope: 'col', tabindex: 0, 'aria-sort': 'none', title: `Sort by ${c}` },
      c,
      h('span', { class: 'q-muted', 'aria-hidden': 'true' }),
    );
    const sort = () => sortBy(i);
    th.addEventListener('click', sort);
    th.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        sort();
      }
    });
    return th;
  });
  const body = h('tbody');
  const table = h('table', { class: 'q-table' }, h('thead', {}, h('tr', {}, ...headCells)), body);
  root.append(tools, h('div', { class: 'q-grid-scroll' }, table));

  root.addEventListener('keydown', (e) => {
    if (e.key === 'PageDown') go(page + 1);
    else if (e.key === 'PageUp') go(page - 1);
    else if (e.key === 'Home' && e.target === root) go(0);
    else if (e.key === 'End' && e.target === root) go(pages() - 1);
    else return;
    e.preventDefault();
  });

  function orderedRows(): WireCell[][] {
    return order.map((i) => rows[i]);
  }

  function sortBy(col: number): void {
    if (sortCol === col) descending = !descending;
    else {
      sortCol = col;
      descending = false;
    }
    // Stable: equal cells keep the query's order, so sorting by a second column after a first works as expected.
    order = sortedRowIndices(rows, { column: col, descending });
    headCells.forEach((th, i) =>
      th.setAttribute('aria-sort', i !== sortCol ? 'none' : descending ? 'descending' : 'ascending'),
    );
    headCells.forEach((th, i) => {
      th.lastElementChild!.textContent = i !== sortCol ? '' : descending ? ' ▼' : ' ▲';
    });
    page = 0;
    draw();
  }

  function go(p: number): void {
    const clamped = Math.min(Math.max(0, p), pages() - 1);
    if (clamped === page) return;
    page = clamped;
    draw();
  }

  function draw(): void {
    const from = page * pageSize;
    const to = Math.min(rows.length, from + pageSize);
    const frag = document.createDocumentFragment();
    for (let k = from; k < to; k++) {
      const tr = document.createElement('tr');
      for (const v of rows[order[k]]) {
        const d = cellDisplay(v);
        const td = document.createElement('td');
        td.textContent = d.long ? clippedText(d.text) : d.text;
        if (d.long) td.title = d.text.slice(0, 4000);
        td.className = d.kind === 'null' ? 'q-null' : d.kind === 'number' ? 'q-cell-num' : '';
        tr.append(td);
      }
      frag.append(tr);
    }
    body.replaceChildren(frag);
    status.textContent =
      rows.length === 0
        ? 'no rows'
        : `rows ${(from + 1).toLocaleString()}–${to.toLocaleString()} of ${rows.length.toLocaleString()}` +
          ` · page ${page + 1} of ${pages()}`;
    for (const b of [first, prev]) setDisabled(b, page === 0);
    for (const b of [next, last]) setDisabled(b, page >= pages() - 1);
  }

  draw();
  return { element: root, orderedRows };
}
