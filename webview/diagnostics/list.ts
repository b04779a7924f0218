// The run's trajectory list: a virtualised listbox (only the rows in view exist in the DOM, plain elements, so
// 10,000 trajectories scroll as fast as ten) under a filter box. One tab stop; arrows, PageUp/PageDown, Home/End move
// the active row, Enter diagnoses it here, Shift+Enter opens it in replay. What it keeps and where keys move is
// listModel.ts's.
import { h, textField } from '../shared/components';
import type { RunItem } from '../../src/core/rewards/report';
import type { DiagnosticsContext } from './context';
import { num } from './format';
import { ROW_PX, listHeight, moveKey, rowWindow, scrollToRow, shownItems } from './listModel';
import { card, openHere } from './widgets';

const LIST_COLUMNS = ['id', 'question', 'reward', 'EX', 'turns', 'hardness', 'advantage', ''];

/** The list of the run's trajectories with its filter box, in a card. */
export function renderList(ctx: DiagnosticsContext, items: RunItem[]): HTMLElement {
  const state = ctx.app.saved;
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
      ctx.host.post({ type: 'openReplay', id: it.id });
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
      openHere(ctx, it.id);
    });
    return row;
  };

  const paint = () => {
    frame = 0;
    const { first, last } = rowWindow(list.scrollTop, list.clientHeight, shown.length);
    windowEl.replaceChildren(...shown.slice(first, last).map((it, k) => rowEl(it, first + k)));
    if (shown.length) list.setAttribute('aria-activedescendant', `row-${active}`);
    else list.removeAttribute('aria-activedescendant');
  };
  const paintSoon = () => {
    if (!frame) frame = requestAnimationFrame(paint);
  };

  const draw = () => {
    shown = shownItems(items, state.filter);
    active = Math.min(active, Math.max(0, shown.length - 1));
    spacer.style.height = `${shown.length * ROW_PX}px`;
    list.style.height = `${listHeight(shown.length)}px`;
    count.textContent = `${shown.length} of ${items.length} trajectories, lowest reward first`;
    paint();
  };

  const move = (to: number) => {
    if (!shown.length) return;
    active = to;
    const top = scrollToRow(active, list.scrollTop, list.clientHeight);
    if (top !== list.scrollTop) list.scrollTop = top;
    paint();
  };
  list.addEventListener('scroll', paintSoon);
  list.addEventListener('keydown', (e) => {
    let act: (() => void) | null = null;
    const to = moveKey(e.key, active, shown.length, list.clientHeight);
    if (to !== null) act = () => move(to);
    else if (e.key === 'Enter')
      act = () => {
        const it = shown[active];
        if (!it) return;
        if (e.shiftKey) ctx.host.post({ type: 'openReplay', id: it.id });
        else openHere(ctx, it.id);
      };
    if (act) {
      e.preventDefault();
      e.stopPropagation();
      act();
    }
  });
  filter.addEventListener('input', () => {
    state.filter = filter.value;
    active = 0;
    list.scrollTop = 0;
    ctx.persistSoon();
    draw();
  });
  box.append(filter, count, head, list);
  // Sizes are known once the box is in the page.
  queueMicrotask(draw);
  return box;
}
