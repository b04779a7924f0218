// The replay page's skeleton: the header (title, counts, scoring, reward panel slot, buttons), the filter bar, the
// notice line, the list box with its column head, the side pane and the help dialog. Views fill these elements in.
import { button, h } from '../shared/components';

export interface Layout {
  title: HTMLElement;
  counts: HTMLElement;
  scoreStatus: HTMLElement;
  scoreButton: HTMLElement;
  /** Where the filter bar puts the reward panel picker. */
  panelSlot: HTMLElement;
  filters: HTMLElement;
  notice: HTMLElement;
  /** The scrolling list (the keyboard's home); `spacer` inside it is as tall as every row together. */
  viewport: HTMLElement;
  spacer: HTMLElement;
  /** The detail, compare or group view. */
  side: HTMLElement;
  help: HTMLElement;
  /** List and side pane; `r-columns` gives the side pane more room (compare, group). */
  main: HTMLElement;
}

/** What the header's buttons do. */
interface HeaderActions {
  score(): void;
  compare(): void;
  group(): void;
  open(): void;
  help(): void;
}

export function buildLayout(root: HTMLElement, on: HeaderActions): Layout {
  const title = h('h1', {}, 'Trajectory replay');
  const counts = h('span', { id: 'r-counts', class: 'q-muted', 'aria-live': 'polite' });
  const scoreStatus = h('span', { id: 'r-score-status', class: 'q-muted' });
  const scoreButton = button('Score all', () => on.score(), {
    appearance: 'secondary',
    id: 'r-score',
    title: 'Compute verdicts and rewards for every trajectory (execution against the gold)',
  });
  const panelSlot = h('span');
  const head = h(
    'div',
    { class: 'r-head' },
    title,
    counts,
    scoreStatus,
    scoreButton,
    panelSlot,
    button('Compare', () => on.compare(), {
      appearance: 'secondary',
      id: 'r-compare',
      title: 'Compare the two marked trajectories (c)',
    }),
    button('Group', () => on.group(), {
      appearance: 'secondary',
      id: 'r-group',
      title: 'All samples of this question (g)',
    }),
    button('Open…', () => on.open(), {
      appearance: 'secondary',
      id: 'r-open',
      title: 'Open another trajectory file or the workspace store',
    }),
    button('?', () => on.help(), { appearance: 'icon', id: 'r-help-button', title: 'Keyboard shortcuts (?)' }),
  );
  const filters = h('div', { class: 'r-filters', role: 'search' });
  const notice = h('div', { class: 'r-notice', id: 'r-notice' });
  const viewport = h('div', {
    class: 'r-viewport',
    tabindex: 0,
    role: 'listbox',
    'aria-label': 'Trajectories',
    id: 'r-list',
  });
  const spacer = h('div', { class: 'r-spacer' });
  viewport.append(spacer);
  const colhead = h(
    'div',
    { class: 'r-colhead', 'aria-hidden': 'true' },
    h('span'),
    h('span', { title: 'verdict' }, '✓'),
    h('span', {}, 'line'),
    h('span', {}, 'question'),
    h('span', { class: 'c-wide' }, 'protocol'),
    h('span', { class: 'c-wider' }, 'model'),
    h('span', { class: 'c-wider' }, 'db'),
    h('span', { class: 'r-num-cell', title: 'turns' }, 'turns'),
    h('span', { class: 'r-num-cell' }, 'reward'),
    h('span', { class: 'c-wide c-label' }, 'label'),
  );
  const listbox = h('div', { class: 'r-listbox' }, colhead, viewport);
  const side = h('div', { class: 'r-side', id: 'r-side', tabindex: -1 });
  const help = h('div', {
    class: 'r-help',
    id: 'r-help',
    role: 'dialog',
    'aria-label': 'Keyboard shortcuts',
    hidden: true,
  });
  const main = h('div', { class: 'r-main' }, listbox, side);
  root.append(head, filters, notice, main, help);
  return { title, counts, scoreStatus, scoreButton, panelSlot, filters, notice, viewport, spacer, side, help, main };
}
