// The run view: the summary (scored, EX, reward, skipped and invalid lines), the reward, turns, hardness and term
// charts, the integrity flags linking to their items, the GRPO group statistics, the mismatch report and the list;
// or, when nothing was scored, why.
import { h } from '../shared/components';
import type { RunDiagnostics } from '../../src/core/rewards/report';
import type { IntegrityFlag } from '../../src/core/rewards/integrity';
import { barChart, histogramChart, theme } from './charts';
import type { DiagnosticsContext } from './context';
import { nothingScored } from './emptyRun';
import { num, pct } from './format';
import { renderList } from './list';
import { renderMismatch } from './mismatch';
import { flagGroups, groupsSentence, rewardLine, zeroVarianceList } from './runText';
import { card, chartBox, itemLinks } from './widgets';

/** A run where nothing was scored: why, instead of EX 0.0% and empty charts. */
function renderNothingScored(ctx: DiagnosticsContext, run: RunDiagnostics, why: string[]): void {
  const src = ctx.app.saved.source;
  const empty = card(
    'Nothing scored',
    h(
      'p',
      { id: 'nothing-scored' },
      `No trajectory of this file could be scored with `,
      h('strong', {}, run.panel),
      ': the charts need at least one scored trajectory (its gold SQL in task.gold and its database).',
    ),
    h('ul', {}, ...why.map((w) => h('li', {}, w))),
    src?.invalid.length
      ? h(
          'details',
          {},
          h('summary', { class: 'q-warn' }, `${src.invalid.length} line(s) of the file are not valid records`),
          h('ul', {}, ...src.invalid.map((s) => h('li', {}, s))),
        )
      : null,
  );
  ctx.ui.content.replaceChildren(empty);
}

export function renderRun(ctx: DiagnosticsContext, run: RunDiagnostics): void {
  const why = nothingScored(run);
  if (why) {
    renderNothingScored(ctx, run, why);
    return;
  }
  const t = theme();
  const src = ctx.app.saved.source;
  const summary = card(
    'Run',
    h(
      'div',
      { class: 'q-row' },
      h('span', {}, `${run.scored} scored with `, h('strong', {}, run.panel)),
      h('span', {}, `EX ${pct(run.ex)}`),
      h('span', {}, rewardLine(run)),
      run.skipped.length ? h('span', { class: 'q-warn' }, `${run.skipped.length} skipped`) : null,
    ),
    run.skipped.length
      ? h(
          'details',
          {},
          h('summary', {}, 'Skipped trajectories'),
          h('ul', {}, ...run.skipped.slice(0, 50).map((s) => h('li', {}, `${s.id}: ${s.reason}`))),
        )
      : null,
    src?.invalid.length
      ? h(
          'details',
          {},
          h('summary', { class: 'q-warn' }, `${src.invalid.length} line(s) of the file are not valid records`),
          h('ul', {}, ...src.invalid.map((s) => h('li', {}, s))),
        )
      : null,
  );

  const rewardBox = chartBox(),
    turnsBox = chartBox(),
    hardBox = chartBox(),
    termsBox = chartBox();
  const charts = h(
    'div',
    { class: 'd-grid', id: 'run-charts' },
    card('Reward', rewardBox),
    card('Turns', turnsBox),
    card('EX by hardness', hardBox),
    card('Mean contribution per term', termsBox),
  );

  const flags = card(
    `Integrity flags (${run.flags.length})`,
    run.flags.length === 0
      ? h(
          'p',
          { class: 'q-ok' },
          'No flags: no empty-gold wins, failing golds, format failures, suspicious wins or zero-variance groups.',
        )
      : null,
    ...flagsByKind(ctx, run.flags),
  );
  flags.id = 'flags';

  let groups: HTMLElement;
  const advBox = chartBox(),
    spreadBox = chartBox();
  if (run.groups) {
    const g = run.groups;
    groups = card(
      'Groups (GRPO)',
      h('p', {}, groupsSentence(g)),
      g.zeroVarianceIds.length
        ? h(
            'div',
            {},
            h('span', { class: 'q-muted' }, 'Zero-variance groups: '),
            h('span', {}, zeroVarianceList(g.zeroVarianceIds)),
          )
        : null,
      h(
        'div',
        { class: 'd-grid' },
        h('div', {}, h('h3', {}, 'Advantages'), advBox),
        h('div', {}, h('h3', {}, 'Advantage spread per group (max − min)'), spreadBox),
      ),
    );
  } else {
    groups = card('Groups (GRPO)', h('p', { class: 'q-muted' }, 'Every question has one sample: no group statistics.'));
  }
  groups.id = 'groups';

  // A state saved by an older version has no mismatch report: the host sends one with the next run.
  const mismatch = run.mismatch ? [renderMismatch(ctx, run.mismatch)] : [];
  ctx.ui.content.replaceChildren(summary, charts, flags, groups, ...mismatch, renderList(ctx, run.items));

  histogramChart(rewardBox, run.reward, {
    title: 'Reward histogram',
    xTitle: `${run.panel} reward`,
    color: t.palette[0],
  });
  histogramChart(turnsBox, run.turns, { title: 'Turns histogram', xTitle: 'turns', color: t.palette[2] });
  const levels = run.byHardness;
  barChart(hardBox, {
    labels: levels.map((l) => `${l.hardness} (${l.count})`),
    datasets: [{ label: 'EX', data: levels.map((l) => l.ex ?? 0), color: t.palette[0] }],
    min: 0,
    max: 1,
    yTitle: 'execution accuracy',
    describe: `EX by hardness: ${levels.map((l) => `${l.hardness} ${pct(l.ex)} of ${l.count}`).join(', ')}`,
    format: (v) => pct(v),
  });
  barChart(termsBox, {
    labels: run.terms.map((x) => `${x.name} (×${x.weight})`),
    datasets: [
      {
        label: 'mean contribution',
        data: run.terms.map((x) => x.meanContribution),
        color: run.terms.map((x) => (x.meanContribution < 0 ? t.negative : t.positive)),
      },
    ],
    yTitle: 'mean weight · value',
    describe: `Mean contribution per term: ${run.terms.map((x) => `${x.name} ${num(x.meanContribution)}`).join(', ')}`,
  });
  if (run.groups) {
    histogramChart(advBox, run.groups.advantages, {
      title: 'Advantage histogram',
      xTitle: 'advantage',
      color: t.palette[1],
    });
    histogramChart(spreadBox, run.groups.spread, {
      title: 'Advantage spread histogram',
      xTitle: 'max − min advantage',
      color: t.palette[4],
    });
  }
}

function flagEl(ctx: DiagnosticsContext, f: IntegrityFlag): HTMLElement {
  return h('div', { class: 'd-flag' }, h('div', { class: 'q-warn' }, f.text), itemLinks(ctx, f.items));
}

/** The first few flags of each kind; the rest of a kind behind a disclosure drawn when opened. */
function flagsByKind(ctx: DiagnosticsContext, flags: readonly IntegrityFlag[]): HTMLElement[] {
  const out: HTMLElement[] = [];
  for (const { kind, shown, rest } of flagGroups(flags)) {
    out.push(...shown.map((f) => flagEl(ctx, f)));
    if (rest.length) {
      const more = h('details', {}, h('summary', {}, `${rest.length} more ${kind} flag(s)`));
      more.addEventListener(
        'toggle',
        () => {
          if (more.open && more.children.length === 1) more.append(...rest.map((f) => flagEl(ctx, f)));
        },
        { once: false },
      );
      out.push(more);
    }
  }
  return out;
}
