// A query plan drawn as a tree (Query Results and Ask's cards): each step of EXPLAIN QUERY PLAN in SQLite's words
// under its parent, a badge for what it does (full scan, index search, temporary sort, correlated subquery…), the
// table's row count beside a read, and the plain-language warnings above the tree. Nested lists, so a screen reader
// reads the nesting; the warnings are a note.
import { h } from './components';
import type { PlanNode, PlanOutcome } from '../../src/protocol/plan';

const STYLE = `
.q-plan { border: 1px solid var(--vscode-panel-border); border-radius: 4px; padding: 6px 10px; margin: 6px 0; }
.q-plan ul { list-style: none; margin: 0; padding-left: 18px; border-left: 1px dotted var(--vscode-panel-border); }
.q-plan > ul { padding-left: 0; border-left: none; }
.q-plan li { margin: 3px 0; }
.q-plan-step { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
.q-plan-badge { display: inline-block; min-width: 7em; margin-right: 6px; padding: 0 4px; border-radius: 3px;
  font-size: 0.85em; text-align: center; background: var(--vscode-badge-background);
  color: var(--vscode-badge-foreground); }
.q-plan-badge.q-plan-bad { background: var(--vscode-inputValidation-warningBackground);
  color: var(--vscode-editorWarning-foreground); border: 1px solid var(--vscode-editorWarning-foreground); }
.q-plan-badge.q-plan-good { background: var(--vscode-testing-iconPassed, #388a34); color: #fff; }
.q-plan-rows { margin-left: 8px; color: var(--vscode-descriptionForeground); }
.q-plan-warnings { margin: 4px 0 8px; padding-left: 18px; color: var(--vscode-editorWarning-foreground); }
`;

let styled = false;
function ensureStyle(): void {
  if (styled) return;
  styled = true;
  document.head.append(h('style', {}, STYLE));
}

/** The badge's words and tone for one step. */
function badge(n: PlanNode): { text: string; tone: 'bad' | 'good' | '' } {
  switch (n.kind) {
    case 'scan':
      if (n.access === 'covering-index') return { text: 'index scan', tone: '' };
      if (n.access === 'constant-row') return { text: 'constant', tone: 'good' };
      return { text: 'full scan', tone: 'bad' };
    case 'search':
      if (n.access === 'automatic-index' || n.access === 'automatic-covering-index')
        return { text: 'automatic index', tone: 'bad' };
      if (n.access === 'primary-key') return { text: 'primary key', tone: 'good' };
      return { text: n.access === 'covering-index' ? 'covering index' : 'index search', tone: 'good' };
    case 'temp-btree':
      return { text: 'temp B-tree', tone: 'bad' };
    case 'correlated-subquery':
      return { text: 'per-row subquery', tone: 'bad' };
    case 'subquery':
      return { text: 'subquery', tone: '' };
    case 'materialize':
      return { text: 'materialize', tone: '' };
    case 'co-routine':
      return { text: 'co-routine', tone: '' };
    case 'compound':
      return { text: 'compound', tone: '' };
    case 'multi-index-or':
      return { text: 'OR by indexes', tone: 'good' };
    case 'bloom-filter':
      return { text: 'bloom filter', tone: '' };
    default:
      return { text: 'step', tone: '' };
  }
}

function rowsText(n: PlanNode): string {
  if (n.rows === undefined) return n.table && n.table !== n.name ? n.table : '';
  const count = `${n.rowsExact === false ? '≥ ' : ''}${n.rows.toLocaleString('en-US')} row${n.rows === 1 ? '' : 's'}`;
  return `${n.table ?? n.name ?? ''} · ${count}`;
}

function stepList(nodes: readonly PlanNode[], idPrefix: string): HTMLElement {
  return h(
    'ul',
    {},
    ...nodes.map((n) => {
      const b = badge(n);
      const rows = rowsText(n);
      return h(
        'li',
        { id: `${idPrefix}-n${n.id}`, 'data-kind': n.kind },
        h(
          'span',
          { class: 'q-plan-step' },
          h('span', { class: `q-plan-badge${b.tone ? ` q-plan-${b.tone}` : ''}` }, b.text),
          n.detail,
        ),
        rows ? h('span', { class: 'q-plan-rows' }, rows) : null,
        n.children.length ? stepList(n.children, idPrefix) : null,
      );
    }),
  );
}

/** The plan (or why there is none), with `id` on its container. */
export function planView(outcome: PlanOutcome, id: string): HTMLElement {
  ensureStyle();
  if (!outcome.ok) {
    return h(
      'div',
      { class: 'q-plan q-error', id, role: 'note' },
      `No plan (${outcome.errorClass}): ${outcome.message}`,
    );
  }
  const { plan } = outcome;
  const source =
    plan.rowSource === 'stat1'
      ? 'row counts from sqlite_stat1'
      : plan.rowSource === 'count'
        ? 'row counts counted'
        : 'no row counts';
  const el = h(
    'div',
    { class: 'q-plan', id, role: 'region', 'aria-label': 'Query plan' },
    h('div', { class: 'q-muted' }, `Query plan (EXPLAIN QUERY PLAN, not run) · ${source}`),
  );
  if (plan.warnings.length) {
    el.append(
      h(
        'ul',
        { class: 'q-plan-warnings', role: 'note', 'aria-label': 'Plan warnings', id: `${id}-warnings` },
        ...plan.warnings.map((w) => h('li', { 'data-kind': w.kind }, `⚠ ${w.message}`)),
      ),
    );
  }
  el.append(
    plan.nodes.length
      ? stepList(plan.nodes, id)
      : h('div', { class: 'q-muted' }, 'SQLite reports no steps for this statement.'),
  );
  return el;
}
