// The detail view: one trajectory turn by turn — its facts, final and gold SQL, prompt, reward breakdown, and a card
// per turn (reasoning, SQL, execution, problems, the observation the model read).
import { badge, button, h, tag } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import type { TrajectoryTurn } from '../../src/core/trajectories/types';
import type { ReplayContext } from './context';
import type { DetailData } from './state';
import { execLine, fmt, reasonText, termsTable, verdictMark } from './format';

/** The observation the model saw: a pipe/df table or text, shown as preformatted text (it is what the model read). */
function observationOf(t: TrajectoryTurn): HTMLElement | null {
  const text = t.observations.map((o) => o.content).join('\n');
  if (!text) return null;
  const n = t.observations.length;
  return h(
    'details',
    { open: true },
    h('summary', {}, `observation (${n} message${n === 1 ? '' : 's'})`),
    h('pre', {}, text),
  );
}

function reasoningOf(t: TrajectoryTurn): HTMLElement {
  const thought = t.action.thought ?? t.assistant;
  return h(
    'details',
    {},
    h('summary', {}, t.action.thought ? 'reasoning' : 'model output'),
    h('pre', {}, thought || '(empty)'),
  );
}

function turnCard(t: TrajectoryTurn, current: boolean, onClick: () => void): HTMLElement {
  const verify = t.action.verify?.exec;
  const card = h(
    'div',
    { class: `q-card r-turn${current ? ' r-current' : ''}`, 'data-turn': t.index },
    h(
      'div',
      { class: 'r-meta' },
      h('strong', {}, `Turn ${t.index + 1}`),
      tag(t.action.kind),
      h('span', {}, `finish: ${t.finishReason}`),
      h(
        'span',
        { title: 'prompt / completion tokens' },
        `tokens ${t.usage.promptTokens} / ${t.usage.completionTokens}${t.usageEstimated ? ' (est.)' : ''}`,
      ),
      h('span', {}, `model ${t.timings.modelMs.toFixed(0)} ms · env ${t.timings.envMs.toFixed(0)} ms`),
      t.action.mdp.length ? h('span', {}, t.action.mdp.join(' → ')) : null,
      verify ? h('span', { class: verify === 'pass' ? 'q-ok' : 'q-warn' }, `verify: ${verify}`) : null,
    ),
    reasoningOf(t),
    t.action.sql ? highlightSql(t.action.sql) : h('div', { class: 'q-muted' }, 'no SQL this turn'),
    execLine(t),
    ...t.action.problems.map((p) => h('div', { class: 'q-warn' }, `⚠ ${p}`)),
    observationOf(t),
  );
  card.addEventListener('click', onClick);
  return card;
}

/** The reward card (`#r-reward`): computing, why there is none, or the panel's total, verdict and terms. */
export function rewardSection(detail: DetailData | null): HTMLElement {
  if (!detail) return h('div');
  if (detail.explainError) {
    return h(
      'div',
      { class: 'q-card', id: 'r-reward' },
      h('strong', {}, 'Reward'),
      h('div', { class: 'q-muted' }, `not scored: ${detail.explainError}`),
    );
  }
  const e = detail.explanation;
  if (!e) return h('div', { class: 'q-card q-muted', id: 'r-reward' }, 'Reward: computing…');
  const verdict = e.correct
    ? '✓ result matches the gold'
    : `✗ ${reasonText(e.reason)}${e.detail ? `: ${e.detail}` : ''}`;
  return h(
    'div',
    { class: 'q-card', id: 'r-reward' },
    h(
      'div',
      { class: 'r-meta' },
      h('strong', {}, `Reward (${e.panel})`),
      badge(fmt(e.total)),
      h('span', { class: e.correct ? 'q-ok' : 'q-error', title: e.reason }, verdict),
    ),
    termsTable(e),
  );
}

/** What the side pane shows for trajectory `detail`; clicking a turn calls `onTurn` with its index. */
export function detailView(ctx: ReplayContext, detail: DetailData, onTurn: (index: number) => void): Node[] {
  const { host, state } = ctx;
  const r = detail.record;
  const s = state.summaries[detail.key];
  const turn = state.app.turn;
  const maxTurns = r.protocol.config.maxTurns;
  const budget = r.protocol.budget ?? (typeof maxTurns === 'number' ? maxTurns : null);
  const finalSql = r.finalSql;
  return [
    h(
      'div',
      { class: 'q-card', id: 'r-detail' },
      h(
        'div',
        { class: 'r-meta' },
        h('strong', {}, r.id),
        s ? verdictMark(s) : null,
        h('span', {}, `sample ${r.sample} of group ${r.groupId}`),
        h('span', {}, r.protocol.name),
        h('span', {}, r.model.spec),
        h('span', {}, r.task.db.id ?? r.task.db.path),
        h('span', {}, `end: ${r.end}`),
        h('span', {}, `${r.turns.length}${budget ? `/${budget}` : ''} turns`),
        h('span', {}, `tokens ${r.usage.promptTokens} / ${r.usage.completionTokens}`),
        h('span', {}, `${(r.timings.totalMs / 1000).toFixed(2)} s`),
        s?.label ? tag(s.label) : null,
      ),
      h('h3', {}, r.task.question),
      r.task.evidence ? h('div', { class: 'q-muted' }, `evidence: ${r.task.evidence}`) : null,
      r.error ? h('div', { class: 'q-error', role: 'alert' }, `episode error: ${r.error}`) : null,
      h(
        'div',
        {},
        h('strong', {}, 'Final SQL'),
        ' ',
        finalSql
          ? button('Open in editor', () => host.post({ type: 'openSql', sql: finalSql }), { appearance: 'secondary' })
          : null,
      ),
      finalSql ? highlightSql(finalSql) : h('div', { class: 'q-muted' }, 'no final SQL'),
      r.task.gold ? h('details', {}, h('summary', {}, 'gold SQL'), highlightSql(r.task.gold)) : null,
      r.prompt.length
        ? h(
            'details',
            {},
            h('summary', {}, `prompt (${r.prompt.length} messages)`),
            ...r.prompt.map((m) => h('div', {}, h('strong', {}, m.role), h('pre', {}, m.content))),
          )
        : null,
    ),
    rewardSection(detail),
    h(
      'div',
      { class: 'r-meta' },
      h('span', { id: 'r-turn-counter', 'data-total': String(r.turns.length) }, turnCounterText(turn, r.turns.length)),
      h('span', { class: 'q-muted' }, 'n/p or ←/→ to step'),
    ),
    ...r.turns.map((t) => turnCard(t, t.index === turn, () => onTurn(t.index))),
  ];
}

/** "Turn i of N" for the turn shown (0 of 0 without turns); kept in step by side.ts's markTurn. */
export function turnCounterText(turn: number, total: number): string {
  return `Turn ${total ? turn + 1 : 0} of ${total}`;
}
