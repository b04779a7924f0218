// The group view: every sample of one question (a GRPO group) in columns — verdict, reward and advantage, turns side
// by side with their results, final SQL, reward terms — under the group's statistics.
import { button, h } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import type { GroupMember } from '../../src/protocol/replay';
import type { GroupData } from './state';
import { fmt, reasonText, smallTurn, termsTable } from './format';

function memberHead(m: GroupMember): HTMLElement {
  const e = m.explanation;
  const verdict = e
    ? h(
        'span',
        { class: e.correct ? 'q-ok' : 'q-error', title: e.reason },
        e.correct ? '✓ correct' : `✗ ${reasonText(e.reason)}`,
      )
    : h('span', { class: 'q-muted' }, 'not scored');
  return h(
    'div',
    { class: 'r-cell', 'data-key': m.key },
    h('div', { class: 'r-meta' }, h('strong', {}, `sample ${m.record.sample}`), verdict),
    h(
      'div',
      { class: 'r-meta' },
      h('span', {}, `reward ${e ? fmt(e.total) : '–'}`),
      h('span', {}, `advantage ${m.advantage === null ? '–' : fmt(m.advantage)}`),
      h('span', {}, `${m.record.turns.length} turns, end: ${m.record.end}`),
    ),
    m.unscored ? h('div', { class: 'q-muted' }, m.unscored) : null,
  );
}

/** What the side pane shows for a group; the back button calls `onBack`. */
export function groupView(group: GroupData, onBack: () => void): Node[] {
  const { members, stats } = group;
  const cols = h('div', { class: 'r-cols', id: 'r-group-view' });
  cols.style.gridTemplateColumns = `repeat(${members.length}, minmax(240px, 1fr))`;
  for (const m of members) cols.append(memberHead(m));
  const turns = Math.max(0, ...members.map((m) => m.record.turns.length));
  for (let i = 0; i < turns; i++) {
    cols.append(h('div', { class: 'r-rowhead' }, `Turn ${i + 1}`));
    for (const m of members) {
      const t = m.record.turns[i] ?? null;
      const cell = smallTurn(t, i);
      const obs = t ? t.observations.map((o) => o.content).join('\n') : '';
      if (obs) cell.append(h('details', {}, h('summary', {}, 'result'), h('pre', {}, obs)));
      cols.append(cell);
    }
  }
  cols.append(h('div', { class: 'r-rowhead' }, 'Final SQL'));
  for (const m of members) {
    cols.append(
      h(
        'div',
        { class: 'r-cell' },
        m.record.finalSql ? highlightSql(m.record.finalSql) : h('span', { class: 'q-muted' }, 'none'),
      ),
    );
  }
  cols.append(h('div', { class: 'r-rowhead' }, `Reward terms (${group.panel})`));
  for (const m of members) {
    cols.append(
      h(
        'div',
        { class: 'r-cell' },
        m.explanation ? termsTable(m.explanation) : h('span', { class: 'q-muted' }, m.unscored ?? 'not scored'),
      ),
    );
  }
  const q = members[0]?.record.task.question ?? '';
  return [
    h(
      'div',
      { class: 'q-card', id: 'r-group-stats' },
      h(
        'div',
        { class: 'r-meta' },
        h('strong', {}, `Group ${group.groupId}`),
        h('span', {}, `${stats.size} samples`),
        h('span', {}, `${stats.correct}/${stats.size} correct`),
        h('span', {}, `mean reward ${fmt(stats.mean)}`),
        h('span', {}, `std ${fmt(stats.std)}`),
        h('span', {}, `${stats.scored} scored`),
        stats.zeroVariance
          ? h(
              'span',
              { class: 'q-warn', title: 'every sample got the same reward: GRPO learns nothing from this group' },
              '⚠ zero variance',
            )
          : null,
        button('Back to detail (d)', onBack, { appearance: 'secondary' }),
      ),
      h('div', {}, q),
    ),
    ...(members.length < 2
      ? [h('div', { class: 'q-muted' }, 'This trajectory is alone in its group (no other samples share its groupId).')]
      : []),
    cols,
  ];
}
