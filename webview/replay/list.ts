// The trajectory list: a virtualised list of rows (fixed height, only the visible rows and a few more in the DOM), the
// cursor that j/k move, and the compare marks. Moving the cursor opens that trajectory after a short pause.
import { h } from '../shared/components';
import { persist, type ReplayContext } from './context';
import { fmt, shortModel, verdictMark } from './format';
import { ROW_H } from './styles';

/** Rows rendered above and below the visible ones, so fast scrolling does not show blanks. */
const OVERSCAN = 8;

export interface TrajectoryList {
  /** Draws the visible rows; without `force`, only when the visible range or the cursor moved. */
  render(force?: boolean): void;
  /** Moves the cursor to row i (clamped) and opens it, at once or after a pause. */
  moveTo(i: number, now?: boolean): void;
  /** Marks or unmarks the cursor's row for compare (two at most: the oldest mark goes). */
  toggleMark(): void;
  /** Drops a trajectory about to open after a cursor move (another view was asked for). */
  cancelPendingSelect(): void;
  /** Scrolls the cursor's row into view (a trajectory opened from elsewhere: Ask, Diagnostics, a reload). */
  revealCursor(): void;
  /** Rows a PageUp/PageDown moves. */
  pageSize(): number;
}

export function createList(ctx: ReplayContext): TrajectoryList {
  const { host, state, ui } = ctx;
  const { viewport, spacer } = ui;
  let rendered = '';
  let selectTimer: ReturnType<typeof setTimeout> | undefined;
  let persistTimer: ReturnType<typeof setTimeout> | undefined;

  function rowFor(i: number): HTMLElement {
    const s = state.summaries[state.keys[i]];
    const marked = state.app.markedIds.includes(s.id);
    const current = i === state.cursor;
    const row = h(
      'div',
      {
        class: `r-row${current ? ' r-cursor' : ''}${marked ? ' r-marked' : ''}`,
        role: 'option',
        'aria-selected': current ? 'true' : 'false',
        'data-key': s.key,
        'data-index': i,
        id: `r-row-${i}`,
        title: s.question,
      },
      h('span', { class: 'r-mark' }),
      verdictMark(s),
      h('span', { class: 'q-muted' }, String(s.line)),
      h('span', {}, s.question),
      h('span', { class: 'c-wide' }, s.protocol),
      h('span', { class: 'c-wider', title: s.model }, shortModel(s.model)),
      h('span', { class: 'c-wider', title: s.db }, s.db),
      h('span', { class: 'r-num-cell' }, String(s.turns)),
      h('span', { class: 'r-num-cell' }, fmt(s.reward)),
      h('span', { class: 'c-wide c-label', title: s.label ?? '' }, s.label ?? ''),
    );
    row.style.top = `${i * ROW_H}px`;
    return row;
  }

  function render(force = false): void {
    const keys = state.keys;
    spacer.style.height = `${keys.length * ROW_H}px`;
    const top = viewport.scrollTop;
    const height = viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(keys.length, Math.ceil((top + height) / ROW_H) + OVERSCAN);
    const sig = `${first}:${last}:${state.cursor}`;
    if (!force && sig === rendered) return;
    rendered = sig;
    const rows: HTMLElement[] = [];
    for (let i = first; i < last; i++) rows.push(rowFor(i));
    spacer.replaceChildren(...rows);
    if (state.cursor >= 0) viewport.setAttribute('aria-activedescendant', `r-row-${state.cursor}`);
  }

  function schedulePersist(): void {
    if (persistTimer) clearTimeout(persistTimer);
    persistTimer = setTimeout(() => persist(ctx), 200);
  }

  function revealCursor(): void {
    if (state.cursor < 0) return;
    const top = state.cursor * ROW_H;
    if (top < viewport.scrollTop) viewport.scrollTop = top;
    else if (top + ROW_H > viewport.scrollTop + viewport.clientHeight) {
      viewport.scrollTop = top + ROW_H - viewport.clientHeight;
    }
  }

  function moveTo(i: number, now = false): void {
    const keys = state.keys;
    if (keys.length === 0) return;
    state.cursor = Math.max(0, Math.min(keys.length - 1, i));
    const s = state.summaries[keys[state.cursor]];
    state.app.selectedId = s.id;
    revealCursor();
    render(true);
    if (selectTimer) clearTimeout(selectTimer);
    const open = () => {
      state.app.view = 'detail';
      state.app.turn = 0;
      host.post({ type: 'select', key: s.key });
      persist(ctx);
    };
    if (now) open();
    else selectTimer = setTimeout(open, 150);
  }

  function toggleMark(): void {
    if (state.cursor < 0) return;
    const id = state.summaries[state.keys[state.cursor]].id;
    const marked = state.app.markedIds;
    const at = marked.indexOf(id);
    if (at >= 0) marked.splice(at, 1);
    else {
      marked.push(id);
      if (marked.length > 2) marked.shift();
    }
    render(true);
    persist(ctx);
  }

  function cancelPendingSelect(): void {
    if (selectTimer) clearTimeout(selectTimer);
    selectTimer = undefined;
  }

  viewport.addEventListener('scroll', () => {
    render();
    schedulePersist();
  });
  new ResizeObserver(() => render(true)).observe(viewport);
  viewport.addEventListener('click', (e) => {
    const row = (e.target as HTMLElement).closest('.r-row') as HTMLElement | null;
    if (!row) return;
    moveTo(Number(row.dataset.index), true);
    viewport.focus();
  });

  return {
    render,
    moveTo,
    toggleMark,
    cancelPendingSelect,
    revealCursor,
    pageSize: () => Math.max(1, Math.floor(viewport.clientHeight / ROW_H) - 1),
  };
}
