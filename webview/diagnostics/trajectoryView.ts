// The trajectory view: the question, the run's facts and the execution verdict, final and gold SQL, the reward's
// terms (a stacked bar and their explanations), the ODT (odtTree.ts), clause F1 and the verification verdicts.
import { button, h, table } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import type { TrajectoryDiagnostics } from '../../src/protocol/diagnostics';
import { barChart, theme } from './charts';
import type { DiagnosticsContext } from './context';
import { num } from './format';
import { renderOdt } from './odtTree';
import { card, chartBox } from './widgets';

function sqlBlock(title: string, sql: string | null): HTMLElement {
  return h('div', {}, h('h3', {}, title), sql === null ? h('p', { class: 'q-muted' }, '(none)') : highlightSql(sql));
}

function renderTerms(d: TrajectoryDiagnostics): HTMLElement {
  const t = theme();
  const colours = d.terms.map((_, i) => t.palette[i % t.palette.length]);
  const barBox = chartBox('d-short');
  const legend = h(
    'table',
    { class: 'q-table', id: 'terms-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['term', 'weight × value', 'contribution', 'explanation'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      ...d.terms.map((term, i) => {
        const sw = h('span', { class: 'd-swatch' });
        sw.style.background = colours[i];
        return h(
          'tr',
          {},
          h(
            'td',
            {},
            sw,
            term.name,
            term.passed === false
              ? h('span', { class: 'q-error', title: term.failure ?? '' }, ' ✗')
              : term.passed
                ? h('span', { class: 'q-ok' }, ' ✓')
                : null,
          ),
          h('td', { class: 'd-num' }, `${num(term.weight)} × ${num(term.value)}`),
          h('td', { class: `d-num ${term.contribution < 0 ? 'q-error' : ''}` }, num(term.contribution)),
          h('td', {}, term.explanation),
        );
      }),
    ),
  );
  const box = card(
    `Reward ${num(d.total)} (${d.panel})`,
    d.terms.length ? barBox : null,
    d.terms.length ? legend : h('p', { class: 'q-muted' }, 'Nothing scored.'),
  );
  box.id = 'terms';
  if (d.terms.length) {
    queueMicrotask(() =>
      barChart(barBox, {
        labels: ['reward'],
        datasets: d.terms.map((term, i) => ({
          label: `${term.name} ${num(term.contribution)}`,
          data: [term.contribution],
          color: colours[i],
        })),
        stacked: true,
        horizontal: true,
        legend: true,
        describe:
          `Terms of ${d.panel}: ${d.terms.map((x) => `${x.name} ${num(x.contribution)}`).join(', ')}; ` +
          `total ${num(d.total)}`,
      }),
    );
  }
  return box;
}

function renderClauses(d: TrajectoryDiagnostics): HTMLElement {
  const box = card('Clause F1 (MTSQL-R1)');
  box.id = 'clauses';
  const c = d.clauses;
  if (!c) {
    box.append(h('p', { class: 'q-muted' }, 'No clause comparison: no final SQL or no gold.'));
    return box;
  }
  if (c.goldParseError || c.parseError)
    box.append(
      h(
        'p',
        { class: 'q-error' },
        c.goldParseError ? `gold does not parse: ${c.goldParseError}` : `prediction does not parse: ${c.parseError}`,
      ),
    );
  const chart = chartBox('d-mid');
  const t = theme();
  box.append(
    h('p', {}, `Mean over the clauses present: ${num(c.value)}`),
    chart,
    table(
      ['clause', 'F1', 'prediction', 'gold'],
      c.rows.map((r) => [
        r.clause.toUpperCase(),
        r.f1 === null ? 'absent from both' : num(r.f1),
        r.pred.join(' | ') || '∅',
        r.gold.join(' | ') || '∅',
      ]),
    ),
  );
  queueMicrotask(() =>
    barChart(chart, {
      labels: c.rows.map((r) => r.clause.toUpperCase()),
      datasets: [
        {
          label: 'F1',
          data: c.rows.map((r) => r.f1 ?? 0),
          color: c.rows.map((r) => (r.f1 === null ? t.muted : r.f1 < 1 ? t.palette[1] : t.positive)),
        },
      ],
      min: 0,
      max: 1,
      yTitle: 'F1',
      describe: `Clause F1: ${c.rows.map((r) => `${r.clause} ${r.f1 === null ? 'absent' : num(r.f1)}`).join(', ')}`,
    }),
  );
  return box;
}

function renderVerification(d: TrajectoryDiagnostics): HTMLElement {
  const box = card('Verification verdicts (MTSQL-R1)');
  box.id = 'verification';
  if (!d.verification) box.append(h('p', { class: 'q-muted' }, 'The trajectory has no E-VERIFY or M-VERIFY verdicts.'));
  else
    box.append(
      table(
        ['turn', 'kind', 'model said', 'verdict', 'reward', 'why'],
        d.verification.map((v) => [v.turn + 1, v.kind, v.said, v.verdict, num(v.value), v.why]),
      ),
    );
  return box;
}

export function renderTrajectory(ctx: DiagnosticsContext, d: TrajectoryDiagnostics): void {
  const exec = d.exec;
  const head = card(
    `Trajectory ${d.id}`,
    h('p', {}, d.question),
    h(
      'div',
      { class: 'q-row q-muted' },
      `group ${d.groupId} · sample ${d.sample} · ${d.protocol} · ${d.model} · ended ${d.end} · ` +
        `${d.turns} turn(s) · hardness ${d.hardness ?? 'unknown'}`,
    ),
    h(
      'div',
      { class: 'q-row' },
      exec
        ? h(
            'span',
            { class: exec.correct ? 'q-ok' : 'q-error' },
            exec.correct
              ? 'Execution: correct'
              : `Execution: wrong (${exec.reason}${exec.detail ? `: ${exec.detail}` : ''})`,
          )
        : null,
      button('Open in replay', () => ctx.host.post({ type: 'openReplay', id: d.id }), {
        appearance: 'secondary',
        id: 'replay',
      }),
    ),
    ...d.notes.map((n) => h('p', { class: 'q-warn' }, n)),
    h('div', { class: 'd-cols' }, sqlBlock('Final SQL', d.finalSql), sqlBlock('Gold SQL', d.goldSql)),
  );
  head.id = 'trajectory-head';
  ctx.ui.content.replaceChildren(head, renderTerms(d), renderOdt(d.odt), renderClauses(d), renderVerification(d));
}
