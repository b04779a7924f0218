// Keyboard first: the shortcuts (j/k in the list, n/p through turns, x marks, c compares, g groups, d back, / search)
// and the help dialog that lists them (?).
import { h } from '../shared/components';
import type { ReplayContext } from './context';
import type { TrajectoryList } from './list';
import type { SidePane } from './side';

const SHORTCUTS: [string, string][] = [
  ['j / ↓', 'next trajectory in the list'],
  ['k / ↑', 'previous trajectory'],
  ['Enter', 'open the selected trajectory'],
  ['n / →', 'next turn'],
  ['p / ←', 'previous turn'],
  ['x / Space', 'mark for compare (two at most)'],
  ['c', 'compare the two marked'],
  ['g', 'GRPO group of the selected trajectory'],
  ['d', 'back to the detail view'],
  ['/', 'search'],
  ['Home / End', 'first / last in the list'],
  ['PageUp / PageDown', 'a page up / down'],
  ['Esc', 'close this help, leave a field'],
  ['?', 'show or hide these shortcuts'],
];

interface HelpDialog {
  /** Shows or hides the shortcuts (flips without an argument); hiding gives the list the focus back. */
  toggle(show?: boolean): void;
  readonly shown: boolean;
}

export function createHelp({ ui }: ReplayContext): HelpDialog {
  const { help, viewport } = ui;
  const keys = (k: string) => k.split(' / ').flatMap((x, i) => (i ? [' / ', h('kbd', {}, x)] : [h('kbd', {}, x)]));
  help.append(
    h('h3', {}, 'Keyboard shortcuts'),
    h('table', {}, ...SHORTCUTS.map(([k, d]) => h('tr', {}, h('td', {}, ...keys(k)), h('td', {}, d)))),
    h(
      'p',
      { class: 'q-muted' },
      'Click a row to open it; click the column of a turn to step there. Press ? or Esc to close.',
    ),
  );
  return {
    toggle(show?: boolean): void {
      const on = show ?? help.hidden;
      help.hidden = !on;
      if (!on) viewport.focus();
    },
    get shown() {
      return !help.hidden;
    },
  };
}

function inField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t?.closest?.('vscode-text-field, vscode-text-area, vscode-dropdown, input, textarea, select');
}

export function bindKeys(ctx: ReplayContext, views: { list: TrajectoryList; side: SidePane; help: HelpDialog }): void {
  const { state, ui } = ctx;
  const { list, side, help } = views;
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      if (help.shown) {
        help.toggle(false);
        e.preventDefault();
        return;
      }
      if (inField(e)) {
        ui.viewport.focus();
        e.preventDefault();
      }
      return;
    }
    if (inField(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    const cursor = state.cursor;
    const handled = (() => {
      switch (e.key) {
        case 'j':
        case 'ArrowDown':
          list.moveTo(cursor + 1);
          return true;
        case 'k':
        case 'ArrowUp':
          list.moveTo(cursor - 1);
          return true;
        case 'PageDown':
          list.moveTo(cursor + list.pageSize());
          return true;
        case 'PageUp':
          list.moveTo(cursor - list.pageSize());
          return true;
        case 'Home':
          list.moveTo(0);
          return true;
        case 'End':
          list.moveTo(state.keys.length - 1);
          return true;
        case 'Enter':
          if (cursor >= 0) list.moveTo(cursor, true);
          return true;
        case 'n':
        case 'ArrowRight':
          side.stepTurn(1);
          return true;
        case 'p':
        case 'ArrowLeft':
          side.stepTurn(-1);
          return true;
        case 'x':
        case ' ':
          list.toggleMark();
          return true;
        case 'c':
          side.openCompare();
          return true;
        case 'g':
          side.openGroup();
          return true;
        case 'd':
          side.backToDetail();
          return true;
        case '?':
          help.toggle();
          return true;
        case '/':
          (document.getElementById('f-search') as HTMLElement | null)?.focus();
          return true;
        default:
          return false;
      }
    })();
    if (handled) e.preventDefault();
  });
}
