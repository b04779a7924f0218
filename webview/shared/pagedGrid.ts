// A result grid over a whole result the host pages through the sandbox: "rows 201–400 of 9,959", first/previous/
// next/last, a header click sorts the whole result (ORDER BY in SQLite), a filter box per column filters it there,
// cuts are stated in words above the table, export of the whole result with progress and Cancel. The grid holds one
// page; every change asks the host (GridToHost) and draws the page it answers with.
import type { GridFilter, GridToApp, GridToHost, WirePage } from '../../src/protocol/grid';
import { toTsv } from '../../src/core/db/resultExport';
import { button, h, setDisabled } from './components';
import { cellDisplay, clippedText } from './cellDisplay';
import { formatCount } from '../../src/core/util/countText';

export interface PagedGrid {
  element: HTMLElement;
  /** Draws what the host sent (a page, an error, export progress). */
  receive(m: GridToApp): void;
  /** Asks for the first page again (a refresh). */
  reload(): void;
}

const n = formatCount;

export function pagedGrid(post: (m: GridToHost) => void, opts: { id: string; pageSize?: number }): PagedGrid {
  const pageSize = opts.pageSize ?? 200;
  let page: WirePage | null = null;
  let sortColumn: number | null = null;
  let descending = false;
  let filters: string[] = [];
  let filterTimer: ReturnType<typeof setTimeout> | undefined;

  const root = h('div', { class: 'q-grid', tabindex: 0, id: opts.id });
  const status = h('span', { class: 'q-muted', 'aria-live': 'polite', id: `${opts.id}-status` }, 'loading…');
  const first = button('«', () => go(0), { appearance: 'icon', title: 'First page (Home)' });
  const prev = button('‹', () => go(offset() - pageSize), { appearance: 'icon', title: 'Previous page (PageUp)' });
  const next = button('›', () => go(offset() + pageSize), { appearance: 'icon', title: 'Next page (PageDown)' });
  const last = button('»', () => go(lastOffset()), { appearance: 'icon', title: 'Last page (End)' });
  const copy = button('Copy page', () => page && post({ type: 'copyText', text: toTsv(page.columns, page.rows) }), {
    appearance: 'secondary',
    title: 'Copy the rows of this page as tab-separated text',
  });
  const exportButtons = (['csv', 'json', 'markdown'] as const).map((format) =>
    button(
      `Export ${format === 'markdown' ? 'Markdown' : format.toUpperCase()}…`,
      () => post({ type: 'export', format }),
      {
        appearance: 'secondary',
        title: `Export every row of the result (sorted and filtered as shown) as ${format}`,
        id: `${opts.id}-export-${format}`,
      },
    ),
  );
  const tools = h('div', { class: 'q-row' }, first, prev, status, next, last, copy, ...exportButtons);
  const notes = h('div', { class: 'q-warn', id: `${opts.id}-notes`, role: 'note' });
  const progress = h('div', { class: 'q-row', id: `${opts.id}-export`, hidden: true });
  const error = h('div', { class: 'q-error', role: 'alert', id: `${opts.id}-error`, hidden: true });
  const head = h('thead');
  const body = h('tbody');
  const table = h('table', { class: 'q-table' }, head, body);
  const scroller = h('div', { class: 'q-grid-scroll' }, table);
  root.append(tools, notes, progress, error, scroller);
  // Clicking a filter box focuses it where it is: the grid does not jump sideways to show the whole box.
  let clickedAt: number | null = null;
  head.addEventListener('pointerdown', (e) => {
    if ((e.target as HTMLElement).classList.contains('q-filter')) clickedAt = scroller.scrollLeft;
  });
  head.addEventListener('focusin', () => {
    if (clickedAt === null) return;
    const x = clickedAt;
    clickedAt = null;
    scroller.scrollLeft = x;
    requestAnimationFrame(() => {
      scroller.scrollLeft = x;
    });
  });

  root.addEventListener('keydown', (e) => {
    if ((e.target as HTMLElement).tagName === 'INPUT') return;
    if (e.key === 'PageDown') go(offset() + pageSize);
    else if (e.key === 'PageUp') go(offset() - pageSize);
    else if (e.key === 'Home' && e.target === root) go(0);
    else if (e.key === 'End' && e.target === root) go(lastOffset());
    else return;
    e.preventDefault();
  });

  const offset = () => page?.offset ?? 0;
  const lastOffset = () => (page?.total ? Math.floor((page.total - 1) / pageSize) * pageSize : offset());

  function ask(at: number): void {
    const wanted: GridFilter[] = filters.map((text, column) => ({ column, text })).filter((f) => f.text.trim() !== '');
    status.textContent = 'loading…';
    post({
      type: 'page',
      offset: Math.max(0, at),
      limit: pageSize,
      ...(sortColumn === null ? {} : { sortColumn, descending }),
      filters: wanted,
    });
  }

  function go(at: number): void {
    if (!page) return;
    const target = Math.max(0, Math.min(at, lastOffset()));
    if (target === page.offset) return;
    ask(target);
  }

  function sortBy(col: number): void {
    if (!page?.pageable) return;
    if (sortColumn === col) descending = !descending;
    else {
      sortColumn = col;
      descending = false;
    }
    ask(0);
  }

  function header(p: WirePage): void {
    const same = head.dataset.columns === JSON.stringify(p.columns) && head.dataset.pageable === String(p.pageable);
    if (!same) {
      head.dataset.columns = JSON.stringify(p.columns);
      head.dataset.pageable = String(p.pageable);
      filters = p.columns.map((_, i) => p.filters.find((f) => f.column === i)?.text ?? '');
      const names = p.columns.map((c, i) => {
        const th = h(
          'th',
          { scope: 'col', tabindex: 0, title: p.pageable ? `Sort the whole result by ${c}` : c },
          c,
          h('span', { class: 'q-muted', 'aria-hidden': 'true' }),
        );
        th.addEventListener('click', () => sortBy(i));
        th.addEventListener('keydown', (e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            sortBy(i);
          }
        });
        return th;
      });
      const rows = [h('tr', {}, ...names)];
      if (p.pageable) {
        const boxes = p.columns.map((c, i) => {
          const input = h('input', {
            class: 'q-filter',
            type: 'text',
            // An input's default width (20 characters) would set each column's; the column's values set it instead.
            size: 1,
            placeholder: 'filter',
            'aria-label': `Filter ${c} (text it contains, =x, >x, <x, is null)`,
            title: 'Text the cell contains, or =x, !=x, >x, >=x, <x, <=x, is null, not null',
            value: filters[i],
          }) as HTMLInputElement;
          input.addEventListener('input', () => {
            filters[i] = input.value;
            if (filterTimer) clearTimeout(filterTimer);
            filterTimer = setTimeout(() => ask(0), 350);
          });
          return h('th', { class: 'q-filter-cell' }, input);
        });
        rows.push(h('tr', {}, ...boxes));
      }
      head.replaceChildren(...rows);
    }
    const names = head.firstElementChild?.children ?? [];
    Array.from(names).forEach((th, i) => {
      const dir = i !== p.sortColumn ? 'none' : p.descending ? 'descending' : 'ascending';
      th.setAttribute('aria-sort', dir);
      th.lastElementChild!.textContent = dir === 'none' ? '' : dir === 'descending' ? ' ▼' : ' ▲';
    });
  }

  function cell(v: WirePage['rows'][number][number], real: boolean): HTMLTableCellElement {
    const d = cellDisplay(v, real);
    const td = document.createElement('td');
    td.className = d.kind === 'null' ? 'q-null' : d.kind === 'number' ? 'q-cell-num' : '';
    if (!d.long) {
      td.textContent = d.text;
      return td;
    }
    // Clipped to one line; click, Enter or Space shows the whole value (wrapped, in a wider cell) and clips it again.
    td.textContent = clippedText(d.text);
    td.classList.add('q-long');
    td.title = 'Click or Enter: show the whole cell';
    td.tabIndex = 0;
    td.setAttribute('aria-expanded', 'false');
    const toggle = () => {
      const open = td.classList.toggle('q-open');
      td.textContent = open ? d.text : clippedText(d.text);
      td.title = open ? 'Click or Enter: clip the cell' : 'Click or Enter: show the whole cell';
      td.setAttribute('aria-expanded', String(open));
    };
    td.addEventListener('click', toggle);
    td.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter' && e.key !== ' ') return;
      e.preventDefault();
      toggle();
    });
    return td;
  }

  function draw(p: WirePage): void {
    page = p;
    sortColumn = p.sortColumn;
    descending = p.descending;
    error.hidden = true;
    header(p);
    const frag = document.createDocumentFragment();
    for (const r of p.rows) {
      const tr = document.createElement('tr');
      r.forEach((v, i) => tr.append(cell(v, p.realColumns[i] ?? false)));
      frag.append(tr);
    }
    body.replaceChildren(frag);
    const from = p.offset + 1;
    const to = p.offset + p.rows.length;
    const of = p.total === null ? 'of ? (not counted)' : `of ${n(p.total)}`;
    const filtered = p.filters.length ? ' (filtered)' : '';
    status.textContent =
      p.rows.length === 0 ? `no rows${filtered}` : `rows ${n(from)}–${n(to)} ${of}${filtered} · ${Math.round(p.ms)} ms`;
    root.setAttribute('aria-label', `Result: ${status.textContent}`);
    notes.replaceChildren(...p.notes.map((t) => h('div', {}, `⚠ ${t}`)));
    for (const b of [first, prev]) setDisabled(b, p.offset === 0);
    const atEnd = p.total === null ? p.rows.length < pageSize : to >= p.total;
    for (const b of [next, last]) setDisabled(b, atEnd);
    setDisabled(last, atEnd || p.total === null);
  }

  function exportProgress(m: Extract<GridToApp, { type: 'exportProgress' }>): void {
    progress.hidden = false;
    const of = m.total === null ? '' : ` of ${n(m.total)}`;
    if (m.finished) {
      progress.replaceChildren(h('span', { class: 'q-muted' }, m.message ?? `exported ${n(m.done)} rows`));
      return;
    }
    progress.replaceChildren(
      h('progress', { max: m.total ?? undefined, value: m.done }),
      h('span', { class: 'q-muted' }, `exporting: ${n(m.done)}${of} rows`),
      button('Cancel', () => post({ type: 'cancelExport' }), { appearance: 'secondary', id: `${opts.id}-cancel` }),
    );
  }

  return {
    element: root,
    receive(m) {
      if (m.type === 'page') draw(m.page);
      else if (m.type === 'pageError') {
        error.hidden = false;
        error.textContent = m.message;
        status.textContent = page ? status.textContent : 'no result';
      } else exportProgress(m);
    },
    reload() {
      ask(0);
    },
  };
}
