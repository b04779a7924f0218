// The page's skeleton: the toolbar (file, progress, position, queue filter, previous/next, exports, help), the
// banner, the trajectory pane, the form pane (form.ts fills it) and the shortcuts' box.
import { button, dropdown, h } from '../shared/components';
import { QUEUE_FILTERS, SHORTCUTS } from '../../src/protocol/labeling';

export interface Layout {
  readonly title: HTMLElement;
  readonly progress: HTMLElement;
  readonly where: HTMLElement;
  readonly filterBox: HTMLElement & { value: string };
  readonly prevBtn: HTMLElement;
  readonly nextBtn: HTMLElement;
  readonly banner: HTMLElement;
  readonly trajectoryPane: HTMLElement;
  readonly formPane: HTMLElement;
  readonly help: HTMLElement;
}

interface LayoutHandlers {
  setFilter(filter: string): void;
  go(delta: number): void;
  exportSft(): void;
  exportRl(): void;
  help(): void;
}

export function buildLayout(root: HTMLElement, on: LayoutHandlers): Layout {
  const title = h('h1', {}, 'Labeling');
  const progress = h('span', { class: 'l-progress', id: 'l-progress', 'aria-live': 'polite' }, '');
  const where = h('span', { class: 'q-muted', id: 'l-where' }, '');
  const filterBox = dropdown(
    QUEUE_FILTERS.map((f) => ({ value: f.value, label: f.label })),
    'unlabeled-first',
    (v) => on.setFilter(v),
    'l-filter',
  );
  filterBox.setAttribute('aria-label', 'Which trajectories to review');
  const prevBtn = button('‹ Previous', () => on.go(-1), {
    appearance: 'secondary',
    title: 'Previous trajectory (k or p)',
    id: 'l-prev',
  });
  const nextBtn = button('Next ›', () => on.go(1), {
    appearance: 'secondary',
    title: 'Next trajectory (j or n)',
    id: 'l-next',
  });
  const head = h(
    'div',
    { class: 'l-head', role: 'toolbar' },
    title,
    progress,
    where,
    filterBox,
    prevBtn,
    nextBtn,
    button('Export SFT…', () => on.exportSft(), {
      appearance: 'secondary',
      title: 'Write SFT JSONL from every label in the store',
    }),
    button('Export RL prompts…', () => on.exportRl(), {
      appearance: 'secondary',
      title: 'Write RL prompts JSONL for this file’s tasks',
    }),
    button('?', () => on.help(), { appearance: 'icon', title: 'Keyboard shortcuts (?)', id: 'l-help-button' }),
  );
  const banner = h('div', { id: 'l-banner', 'aria-live': 'assertive' });
  const trajectoryPane = h('div', { id: 'l-trajectory' });
  const formPane = h('div', { class: 'l-form q-card', id: 'l-form', hidden: true });
  const help = h(
    'div',
    { class: 'l-help', id: 'l-shortcuts', hidden: true, role: 'dialog', 'aria-label': 'Keyboard shortcuts' },
    h('strong', {}, 'Keyboard shortcuts'),
    h(
      'table',
      {},
      h('tbody', {}, ...SHORTCUTS.map(([k, w]) => h('tr', {}, h('td', {}, h('kbd', {}, k)), h('td', {}, w)))),
    ),
    h('div', { class: 'q-muted' }, 'Moving to another trajectory saves unsaved edits first.'),
  );
  root.append(head, banner, h('div', { class: 'l-grid' }, trajectoryPane, formPane), help);
  return { title, progress, where, filterBox, prevBtn, nextBtn, banner, trajectoryPane, formPane, help };
}
