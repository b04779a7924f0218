// The checkpoint compare panel: EX for greedy decoding, majority vote and pass@K by hardness, one column group per
// model side by side (from each model's stored bench report on the same dataset), each model's provenance, and the
// questions whose greedy answers disagree, each with a button opening its two trajectories in Replay's compare view.
import { connectHost } from '../shared/host';
import { button, h, registerComponents } from '../shared/components';
import type { CompareState, CompareView, ToApp, ToHost } from '../../src/protocol/compare';
import { exTableRows } from './table';

registerComponents();
const host = connectHost<ToHost, ToApp, CompareState>();
const app = document.getElementById('app')!;
const status = h('div', { role: 'status', 'aria-live': 'polite', id: 'status', class: 'q-error' });
const body = h('div', { id: 'compare' }, h('p', { class: 'q-muted' }, 'Loading the comparison…'));
app.replaceChildren(h('h1', {}, 'Compare checkpoints'), status, body);

function exTable(view: CompareView): HTMLElement {
  const { comparison: c } = view;
  const head1 = h('tr', {}, h('th', { rowspan: '2' }, 'level'), h('th', { rowspan: '2' }, 'n'));
  const head2 = h('tr');
  for (const m of c.models) {
    head1.append(h('th', { colspan: '3', title: m }, m));
    for (const k of ['greedy', 'majority', 'pass@K']) head2.append(h('th', {}, k));
  }
  const rows = exTableRows(c).map((row) => {
    const tr = h('tr', { 'data-level': row.level }, h('td', {}, row.level), h('td', {}, row.n));
    for (const x of row.cells) {
      tr.append(
        h('td', { 'data-model': x.model, 'data-k': 'greedy' }, x.greedy),
        h('td', { 'data-model': x.model, 'data-k': 'majority' }, x.majority),
        h('td', { 'data-model': x.model, 'data-k': 'passAtK' }, x.passAtK),
      );
    }
    return tr;
  });
  return h('table', { class: 'q-table', id: 'ex-table' }, h('thead', {}, head1, head2), h('tbody', {}, ...rows));
}

function disagreementList(view: CompareView): HTMLElement {
  const c = view.comparison;
  const list = h('ul', { id: 'disagreements' });
  for (const d of c.disagreements) {
    const a = d.right[0];
    const b = d.wrong[0];
    list.append(
      h(
        'li',
        { 'data-key': d.key },
        h('b', {}, d.id || `#${d.index}`),
        ` [${d.level ?? '?'}] ${d.dbId}: right ${d.right.join(', ')}; wrong ${d.wrong.join(', ')} `,
        button(`Compare ${a} / ${b} in Replay`, () => host.post({ type: 'openPair', key: d.key, a, b }), {
          appearance: 'secondary',
        }),
      ),
    );
  }
  return h(
    'section',
    { 'aria-label': 'Disagreements' },
    h('h2', {}, `Greedy answers disagree on ${c.disagreements.length} of ${c.common} common questions`),
    c.disagreements.length ? list : h('p', { class: 'q-muted' }, 'They agree on every common question.'),
  );
}

function render(view: CompareView): void {
  const models = h(
    'ul',
    { id: 'models' },
    ...view.models.map((m) => h('li', {}, h('b', {}, m.name), ` ${m.provenance || m.spec}`)),
  );
  body.replaceChildren(h('p', {}, `Dataset: ${view.dataset}`), models, exTable(view), disagreementList(view));
}

host.onMessage((msg) => {
  if (msg.type === 'comparison') {
    status.textContent = '';
    render(msg.view);
    // What the host reopens the panel on after a window reload (compareRestore checks it).
    host.saveState({ names: msg.view.models.map((m) => m.name), dataset: msg.view.dataset });
  } else if (msg.type === 'error') status.textContent = msg.text;
});
host.post({ type: 'ready' });
