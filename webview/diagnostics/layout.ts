// The page's skeleton: the header (title, source, panel picker, buttons), the shortcuts' help, the status line and
// the content, where the run or the trajectory is drawn.
import { h } from '../shared/components';

export interface Layout {
  readonly header: HTMLElement;
  readonly helpBox: HTMLElement;
  readonly statusBox: HTMLElement;
  readonly content: HTMLElement;
}

export function buildLayout(root: HTMLElement): Layout {
  const header = h('div', { class: 'q-row', id: 'header' });
  const helpBox = h('div', { class: 'q-card', id: 'help' });
  const statusBox = h('div', { role: 'status', 'aria-live': 'polite', id: 'status' });
  const content = h('div', { id: 'content' });
  root.append(header, helpBox, statusBox, content);
  return { header, helpBox, statusBox, content };
}
