// Small pieces every view of the panel uses: a titled card, a box a chart is drawn in, and the item links of a flag
// (Enter opens the item here, Shift opens it in replay).
import { h } from '../shared/components';
import type { DiagnosticsContext } from './context';

export function card(title: string, ...body: (Node | string | null)[]): HTMLElement {
  return h('section', { class: 'q-card' }, h('h2', {}, title), ...body);
}

export function chartBox(cls = ''): HTMLElement {
  return h('div', { class: `d-chart ${cls}` });
}

/** Diagnoses one trajectory here (the host answers with a trajectory view). */
export function openHere(ctx: DiagnosticsContext, id: string): void {
  ctx.host.post({ type: 'openTrajectory', id });
}

/** Plain anchors (not toolkit elements): a run can raise many flags, each naming many items. */
export function itemLinks(ctx: DiagnosticsContext, ids: readonly string[], max = 24): HTMLElement {
  const box = h('div', { class: 'd-items' });
  for (const id of ids.slice(0, max)) {
    const a = h(
      'a',
      { href: '#', class: 'd-link', title: `Open ${id} here (Enter); Shift+click or Shift+Enter opens it in replay` },
      id,
    );
    a.addEventListener('click', (e) => {
      e.preventDefault();
      if (e.shiftKey) ctx.host.post({ type: 'openReplay', id });
      else openHere(ctx, id);
    });
    box.append(a);
  }
  if (ids.length > max)
    box.append(h('span', { class: 'q-muted' }, `+${ids.length - max} more (filter the list below)`));
  return box;
}
