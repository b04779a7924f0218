// Progress-SQL's Table 8 for the run: per scope (all, greedy) the four mismatch categories with their tags, count,
// rate and a bar, Avg. Err., the tags that fired (each a link that filters the list to it), and what was not
// compared; with the choice of SQL compared (the host recomputes on a change).
import { dropdown, h } from '../shared/components';
import { MISMATCH_SQL_CHOICES, type MismatchReport, type MismatchScope } from '../../src/protocol/diagnostics';
import type { DiagnosticsContext } from './context';
import { pct } from './format';
import { notCompared, scopeHeading } from './runText';
import { card } from './widgets';

/** Shows the trajectories a tag fired for: the list's filter set to the tag. */
function filterByTag(ctx: DiagnosticsContext, tag: string): void {
  ctx.app.saved.filter = tag;
  ctx.persist();
  ctx.render();
  document.getElementById('trajectories')?.scrollIntoView();
}

function bar(rate: number | null): HTMLElement {
  const el = h('span', { class: 'd-bar', 'aria-hidden': 'true' });
  el.style.width = `${Math.round(120 * (rate ?? 0))}px`;
  return el;
}

function tagLink(ctx: DiagnosticsContext, tag: string, count: number): HTMLElement {
  const title = `Show the ${count} trajectories tagged ${tag} in the list below`;
  const a = h('a', { href: '#', class: 'd-link', title }, tag);
  a.addEventListener('click', (e) => {
    e.preventDefault();
    filterByTag(ctx, tag);
  });
  return a;
}

/** One scope of the report: the four categories with their tags, count, rate and a bar, then Avg. Err.; then tags. */
function mismatchScope(ctx: DiagnosticsContext, s: MismatchScope): HTMLElement {
  const countOf = new Map(s.tags.map((t) => [t.tag, t.count]));
  const numeric = (i: number) => (i === 2 || i === 3 ? 'd-num' : '');
  const row = (cells: (Node | string)[]) => h('tr', {}, ...cells.map((c, i) => h('td', { class: numeric(i) }, c)));
  const columns = ['category', 'tags', 'count', 'rate', ''];
  const head = h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c))));
  const cats = s.categories.map((c) => {
    const tags = h('span', {}, ...c.tags.flatMap((t, i) => [i ? ', ' : '', tagLink(ctx, t, countOf.get(t) ?? 0)]));
    return row([c.name, tags, String(c.count), pct(c.rate), bar(c.rate)]);
  });
  const avg = row([
    h('strong', {}, 'Avg. Err.'),
    h('span', { class: 'q-muted' }, 'mean of the four rates'),
    '',
    pct(s.average),
    bar(s.average),
  ]);
  const fired = s.tags.filter((t) => t.count > 0);
  const tagList = fired.length
    ? fired.flatMap((t, i) => [i ? ' · ' : '', tagLink(ctx, t.tag, t.count), ` ${t.count} (${pct(t.rate)})`])
    : ['none fired'];
  const apart = notCompared(s);
  return h(
    'div',
    { class: 'd-mismatch-scope', 'data-scope': s.name },
    h('h3', {}, scopeHeading(s)),
    h('table', { class: 'q-table' }, head, h('tbody', {}, ...cats, avg)),
    h('p', {}, h('span', { class: 'q-muted' }, 'Tags: '), ...tagList),
    apart ? h('p', { class: 'q-muted' }, `Not compared (no tags, left out of the rates): ${apart}.`) : null,
  );
}

/** Progress-SQL Table 8 for the run, with the choice of SQL compared (the host recomputes on a change). */
export function renderMismatch(ctx: DiagnosticsContext, m: MismatchReport): HTMLElement {
  const picker = dropdown(
    MISMATCH_SQL_CHOICES.map((c) => ({ value: c.value, label: c.label })),
    m.sql,
    (v) => ctx.host.post({ type: 'setMismatchSql', sql: v }),
    'mismatch-sql',
  );
  picker.setAttribute('aria-label', 'SQL compared');
  const box = card(
    'Structural mismatches (Progress-SQL Table 8)',
    h(
      'p',
      { class: 'q-muted' },
      'Share of compared predictions with an ODT tag of each category (the tag → category ' +
        'map is ours, see docs/rewards.md). Table 8 reports these for single-turn greedy predictions.',
    ),
    h('div', { class: 'q-row' }, h('label', { for: 'mismatch-sql' }, 'Compare the'), picker),
    ...m.scopes.map((s) => mismatchScope(ctx, s)),
  );
  box.id = 'mismatch';
  return box;
}
