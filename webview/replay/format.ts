// Small pieces the replay views share: number formatting, the verdict mark, short model names, the evaluator's
// reasons in words, a turn's execution line, a compact turn cell (compare, group) and the reward terms table.
import { h, tag } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import type { Explanation, ListRow } from '../../src/protocol/replay';
import type { TrajectoryTurn } from '../../src/core/trajectories/types';

/** A number as short as it can be: integers plain, others to three decimals without trailing zeros; null as –. */
export const fmt = (n: number | null): string =>
  n === null ? '–' : Number.isInteger(n) ? String(n) : n.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');

export function verdictMark(s: ListRow): HTMLElement {
  if (s.verdict === 'correct') return h('span', { class: 'q-ok', title: `correct (${s.verdictSource})` }, '✓');
  if (s.verdict === 'incorrect') return h('span', { class: 'q-error', title: `incorrect (${s.verdictSource})` }, '✗');
  return h('span', { class: 'q-muted', title: 'not scored' }, '·');
}

/** `openai:http://host/v1#qwen2.5-coder-7b` → `qwen2.5-coder-7b`; the full spec is the cell's tooltip. */
export function shortModel(spec: string): string {
  const hash = spec.lastIndexOf('#');
  if (hash >= 0 && hash < spec.length - 1) return spec.slice(hash + 1);
  const parts = spec.split(/[/:]/).filter(Boolean);
  return parts[parts.length - 1] ?? spec;
}

const REASONS: Record<string, string> = {
  match: 'result matches the gold',
  values: 'wrong values',
  'row-count': 'wrong number of rows',
  columns: 'wrong columns',
  order: 'wrong row order',
  'pred-error': 'the SQL fails',
  'pred-timeout': 'the SQL timed out',
  'gold-error': 'the gold SQL fails',
  'gold-timeout': 'the gold SQL timed out',
  'missing-prediction': 'no final SQL',
  'empty-prediction': 'empty final SQL',
};
/** The evaluator's reason code in words (the code stays in the tooltip). */
export const reasonText = (r: string): string => REASONS[r] ?? r;

export function execLine(t: TrajectoryTurn): HTMLElement | null {
  const e = t.exec;
  if (!e) return null;
  if (!e.ok) {
    return h(
      'div',
      { class: 'q-error', role: 'note' },
      `✗ ${e.errorClass ?? 'error'}: ${e.error ?? 'failed'}  (${e.ms.toFixed(0)} ms)`,
    );
  }
  return h(
    'div',
    { class: 'r-meta' },
    h('span', { class: 'q-ok' }, '✓ ran'),
    h('span', {}, `${e.rowCount} row${e.rowCount === 1 ? '' : 's'}${e.truncated ? ' (truncated)' : ''}`),
    h('span', {}, `${e.ms.toFixed(1)} ms`),
    e.columns.length ? h('span', { title: e.columns.join(', ') }, `columns: ${e.columns.join(', ')}`) : null,
  );
}

/** One turn in a column cell (compare, group); a missing turn is a dash. */
export function smallTurn(t: TrajectoryTurn | null, index: number): HTMLElement {
  if (!t) return h('div', { class: 'r-cell q-muted', 'data-turn': index }, '—');
  return h(
    'div',
    { class: 'r-cell r-turn', 'data-turn': index },
    h('div', { class: 'r-meta' }, tag(t.action.kind), `tokens ${t.usage.completionTokens}`),
    t.action.sql ? highlightSql(t.action.sql) : h('div', { class: 'q-muted' }, 'no SQL'),
    execLine(t),
    ...t.action.problems.map((p) => h('div', { class: 'q-warn' }, `⚠ ${p}`)),
  );
}

/** A panel's terms: value, weight, contribution (with a bar scaled to the largest) and why. */
export function termsTable(e: Explanation): HTMLElement {
  const maxAbs = Math.max(1e-9, ...e.terms.map((t) => Math.abs(t.contribution)));
  return h(
    'table',
    { class: 'r-terms', 'aria-label': `reward terms of panel ${e.panel}` },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'term'),
        h('th', {}, 'value'),
        h('th', {}, 'weight'),
        h('th', {}, 'contribution'),
        h('th', {}, 'why'),
      ),
    ),
    h(
      'tbody',
      {},
      ...e.terms.map((t) => {
        const bar = h('span', { class: `r-bar${t.contribution < 0 ? ' r-neg' : ''}` });
        bar.style.width = `${Math.round((Math.abs(t.contribution) / maxAbs) * 60)}px`;
        return h(
          'tr',
          {},
          h('td', {}, t.name),
          h('td', { class: 'r-num-cell' }, fmt(t.value)),
          h('td', { class: 'r-num-cell' }, fmt(t.weight)),
          h('td', {}, bar, ' ', fmt(t.contribution)),
          h('td', {}, t.explanation),
        );
      }),
    ),
  );
}
