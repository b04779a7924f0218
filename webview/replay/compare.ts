// The compare view: two marked trajectories side by side, their final SQL with the differences highlighted, and their
// turns aligned by index.
import { button, h } from '../shared/components';
import { alignTurns } from '../../src/core/trajectories/compare';
import type { DiffPart } from '../../src/protocol/replay';
import type { TrajectoryRecord } from '../../src/core/trajectories/types';
import type { ReplayContext } from './context';
import type { CompareData } from './state';
import { fmt, smallTurn, verdictMark } from './format';

function diffView(parts: DiffPart[], which: 'a' | 'b'): HTMLElement {
  const pre = h('pre', { class: 'q-sql' });
  for (const p of parts) {
    const text = which === 'a' ? p.a : p.b;
    if (!text) continue;
    if (p.op === 'same') pre.append(text);
    else pre.append(h('span', { class: p.op === 'removed' ? 'r-del' : 'r-add' }, text));
  }
  return pre;
}

function headerCell(ctx: ReplayContext, key: number, r: TrajectoryRecord): HTMLElement {
  const s = ctx.state.summaries[key];
  return h(
    'div',
    { class: 'r-cell' },
    h(
      'div',
      { class: 'r-meta' },
      h('strong', {}, r.id),
      s ? verdictMark(s) : null,
      h('span', {}, `reward ${fmt(s?.reward ?? null)}`),
      h('span', {}, r.protocol.name),
      h('span', {}, r.model.spec),
      h('span', {}, `${r.turns.length} turns`),
      h('span', {}, `end: ${r.end}`),
    ),
    h('div', {}, r.task.question),
  );
}

/** What the side pane shows for a comparison; the back button calls `onBack`. */
export function compareView(ctx: ReplayContext, compare: CompareData, onBack: () => void): Node[] {
  const { a, b, diff } = compare;
  const same = diff.every((p) => p.op === 'same');
  const cols = h('div', { class: 'r-cols', id: 'r-compare-view' });
  cols.style.gridTemplateColumns = '1fr 1fr';
  cols.append(
    headerCell(ctx, a.key, a.record),
    headerCell(ctx, b.key, b.record),
    h(
      'div',
      { class: 'r-rowhead' },
      same ? 'Final SQL (same up to spacing and case)' : 'Final SQL (differences highlighted)',
    ),
    h('div', { class: 'r-cell' }, diffView(diff, 'a')),
    h('div', { class: 'r-cell' }, diffView(diff, 'b')),
  );
  for (const row of alignTurns(a.record.turns, b.record.turns)) {
    cols.append(
      h('div', { class: 'r-rowhead' }, `Turn ${row.index + 1}`),
      smallTurn(row.a, row.index),
      smallTurn(row.b, row.index),
    );
  }
  return [
    h(
      'div',
      { class: 'r-meta' },
      h('strong', {}, 'Compare'),
      button('Back to detail (d)', onBack, { appearance: 'secondary' }),
    ),
    cols,
  ];
}
