// Progress-SQL's oracle-guided diagnostic tree of one trajectory: F_struct, F_lex and F, the diagnostic tags, the
// next-turn feedback, and the prediction's and the gold's trees side by side (a node's status as its colour, the
// items found in one tree only highlighted).
import { h } from '../shared/components';
import type { OdtView, OdtViewNode } from '../../src/core/rewards/odtView';
import { num } from './format';
import { card } from './widgets';

function treeNode(n: OdtViewNode): HTMLElement {
  const head = h(
    'div',
    {},
    h('strong', {}, n.type),
    n.label ? ` (${n.label})` : '',
    h('span', { class: `d-status d-${n.status}` }, n.status),
    n.score !== null ? h('span', { class: 'q-muted' }, `  s_node ${num(n.score, 2)}`) : '',
  );
  const tags = n.tags.length
    ? h('div', {}, ...n.tags.map((x) => h('span', { class: 'd-tag', title: x.detail }, x.tag)))
    : null;
  const flags = n.flags.length
    ? h(
        'div',
        { class: 'd-field' },
        h('span', { class: 'q-muted' }, 'flags: '),
        ...n.flags.map((f) => h('code', { class: f.differs ? 'd-diff' : '' }, f.name)),
      )
    : null;
  const counts = n.counts
    ? h('div', { class: 'd-field q-muted' }, `joins ${n.counts.joins} · select items ${n.counts.selectItems}`)
    : null;
  const fields = n.fields
    .filter((f) => f.items.length > 0 || (f.similarity !== null && f.similarity < 1))
    .map((f) =>
      h(
        'div',
        { class: 'd-field' },
        h(
          'span',
          { class: f.low ? 'd-low' : 'q-muted', title: f.low ? 'below the tag threshold' : '' },
          `${f.name}${f.similarity !== null ? ` ${num(f.similarity, 2)}` : ''}: `,
        ),
        ...(f.items.length
          ? f.items.map((i) =>
              h(
                'code',
                { class: i.onlyHere ? 'd-diff' : '', title: i.onlyHere ? 'not in the other tree' : '' },
                i.text,
              ),
            )
          : [h('span', { class: 'q-muted' }, '∅')]),
      ),
    );
  return h(
    'li',
    {},
    h('div', { class: `d-node d-${n.status}` }, head, tags, counts, flags, ...fields),
    n.children.length ? h('ul', {}, ...n.children.map(treeNode)) : null,
  );
}

function tree(title: string, root: OdtViewNode | null, error: string | null, id: string): HTMLElement {
  return h(
    'div',
    { id },
    h('h3', {}, title),
    root
      ? h('ul', { class: 'd-tree' }, treeNode(root))
      : h('p', { class: 'q-error' }, `does not parse: ${error ?? 'unknown error'}`),
  );
}

export function renderOdt(odt: OdtView | null): HTMLElement {
  const box = card('Oracle-guided diagnostic tree (Progress-SQL)');
  box.id = 'odt';
  if (!odt) {
    box.append(h('p', { class: 'q-muted' }, 'No ODT: the trajectory has no final SQL or no gold.'));
    return box;
  }
  box.append(
    h('p', {}, `F_struct ${num(odt.struct)} · F_lex ${num(odt.lexical)} · F ${num(odt.F)}`),
    odt.tags.length
      ? h(
          'ul',
          {},
          ...odt.tags.map((x) =>
            h(
              'li',
              {},
              h('span', { class: 'd-tag' }, x.tag),
              ` ${x.meaning} `,
              h('span', { class: 'q-muted' }, x.reasons.join('; ')),
            ),
          ),
        )
      : h('p', { class: 'q-ok' }, 'No diagnostic tags.'),
    // The text is App. F's next-turn message, which starts with its own "Feedback:".
    odt.feedback
      ? h(
          'details',
          {},
          h('summary', {}, 'Next-turn feedback the Progress-SQL protocol would send'),
          h('p', { class: 'q-muted' }, odt.feedback),
        )
      : '',
    h(
      'p',
      { class: 'q-muted' },
      'Highlighted items are in one tree only; a yellow node matched with differences, a red one has no counterpart.',
    ),
    h(
      'div',
      { class: 'd-cols' },
      tree('Prediction', odt.pred, odt.predError, 'odt-pred'),
      tree('Gold', odt.gold, odt.goldError, 'odt-gold'),
    ),
  );
  return box;
}
