// One trajectory as the reviewer reads it: the question with its database, protocol, model, turns and end, the
// evidence, earlier questions and gold SQL; then each turn (reasoning, SQL or raw output, execution, problems,
// observations) and the final SQL.
import { h } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import type { TrajectoryRecord } from '../../src/protocol/labeling';
import { dbName, execText, turnsText } from './labelText';

/** Fills `pane` with `r`; `changed` when the trajectory differs from the one its label was made on. */
export function renderTrajectory(pane: HTMLElement, r: TrajectoryRecord, changed: boolean): void {
  const parts: Node[] = [];
  parts.push(
    h(
      'div',
      { class: 'q-card' },
      h('div', { class: 'l-question', id: 'l-question' }, r.task.question),
      h(
        'div',
        { class: 'l-meta' },
        h('span', { title: r.task.db.path }, `db: ${dbName(r)}`),
        h('span', {}, `protocol: ${r.protocol.name}`),
        h('span', {}, `model: ${r.model.spec}`),
        h('span', {}, turnsText(r)),
        h('span', { class: r.end === 'answer' ? undefined : 'q-warn' }, `ended: ${r.end}`),
        r.task.difficulty ? h('span', {}, `difficulty: ${r.task.difficulty}`) : null,
        h('span', { class: 'q-muted' }, r.id),
      ),
      r.task.evidence ? h('div', { class: 'q-muted' }, `Evidence: ${r.task.evidence}`) : null,
      r.task.history.length > 0
        ? h(
            'details',
            {},
            h('summary', {}, `${r.task.history.length} earlier question(s)`),
            ...r.task.history.map((x) => h('div', {}, h('div', {}, x.question), highlightSql(x.sql))),
          )
        : null,
      r.task.gold
        ? h('div', {}, h('span', { class: 'q-muted' }, 'Gold SQL'), highlightSql(r.task.gold))
        : h('div', { class: 'q-muted' }, 'No gold SQL: Run compares with the final SQL.'),
      changed
        ? h(
            'div',
            { class: 'q-warn' },
            'This trajectory changed since it was labeled (its fingerprint differs); check the label.',
          )
        : null,
      r.error ? h('div', { class: 'q-error' }, `Error: ${r.error}`) : null,
    ),
  );
  r.turns.forEach((t) => {
    const exec = t.exec;
    parts.push(
      h(
        'div',
        { class: 'q-card l-turn', id: `l-turn-${t.index}` },
        h('h3', {}, `Turn ${t.index + 1} · ${t.action.kind}`),
        t.action.thought ? h('details', {}, h('summary', {}, 'Reasoning'), h('pre', {}, t.action.thought)) : null,
        t.action.sql
          ? highlightSql(t.action.sql)
          : h('details', {}, h('summary', {}, 'Raw output'), h('pre', {}, t.assistant)),
        exec ? h('div', { class: exec.ok ? 'q-muted' : 'q-error' }, execText(exec)) : null,
        t.action.problems.length ? h('div', { class: 'q-warn' }, t.action.problems.join('; ')) : null,
        ...t.observations.map((o) =>
          h(
            'details',
            { open: t.observations.length === 1 },
            h('summary', {}, `Observation (${o.role})`),
            h('pre', { class: 'l-obs' }, o.content),
          ),
        ),
      ),
    );
  });
  parts.push(
    h(
      'div',
      { class: 'q-card' },
      h('h3', {}, 'Final SQL'),
      r.finalSql ? highlightSql(r.finalSql) : h('div', { class: 'q-warn' }, `No final SQL (ended: ${r.end}).`),
    ),
  );
  pane.replaceChildren(...parts);
}
