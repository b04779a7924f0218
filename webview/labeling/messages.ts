// The host's messages: the queue, an item to show (its unsaved draft or stored label in the form), an empty queue,
// the tags, a save's or a run's answer (session.ts drops answers to older requests), a grid page, an error.
import { h, setDisabled } from '../shared/components';
import type { Label, ToApp, TrajectoryRecord } from '../../src/protocol/labeling';
import type { Actions } from './actions';
import { type LabelContext, persist } from './context';
import type { RunResult } from './runResult';
import { acceptRun, acceptSaved, openItem } from './session';
import { renderTrajectory } from './trajectoryView';
import { renderHead, renderSaveFailed, renderStatus, renderVerdict, say } from './views';

function showItem(
  ctx: LabelContext,
  views: { actions: Actions; run: RunResult },
  position: number,
  r: TrajectoryRecord,
  l: Label | null,
  changed: boolean,
): void {
  const { form, ui } = ctx;
  const { sameItem, form: values } = openItem(ctx.session, position, r, l);
  if (!sameItem) views.run.show(null);
  renderVerdict(ctx);
  form.sqlBox.value = values.correctedSql;
  form.noteBox.value = values.note;
  setDisabled(form.useFinal, !r.finalSql);
  renderTrajectory(ui.trajectoryPane, r, changed);
  views.actions.renderTags();
  renderStatus(ctx);
  renderHead(ctx);
  ui.formPane.hidden = false;
  persist(ctx);
  if (!sameItem) window.scrollTo(0, 0);
}

export function handleMessage(ctx: LabelContext, views: { actions: Actions; run: RunResult }, m: ToApp): void {
  const { session, ui } = ctx;
  switch (m.type) {
    case 'loading':
      say(ctx, `Reading ${m.file}…`);
      return;
    case 'queue':
      session.queue = m.queue;
      session.saved.file = m.queue.file;
      session.saved.filter = m.queue.filter;
      persist(ctx);
      say(ctx, m.queue.problems.length ? `Some lines could not be read: ${m.queue.problems.join(' · ')}` : '', 'warn');
      renderHead(ctx);
      return;
    case 'item':
      showItem(ctx, views, m.position, m.record, m.label, m.changed);
      return;
    case 'empty':
      session.record = null;
      ui.formPane.hidden = true;
      ui.trajectoryPane.replaceChildren(
        h('div', { class: 'q-card q-muted', id: 'l-empty' }, `Nothing to label: ${m.reason}.`),
      );
      if (session.queue) {
        session.queue.size = 0;
        renderHead(ctx);
      }
      return;
    case 'tags':
      session.allTags = m.tags;
      views.actions.renderTags();
      return;
    case 'saved':
      if (acceptSaved(session, m)) {
        persist(ctx);
        renderStatus(ctx);
      }
      if (session.queue) renderHead(ctx);
      return;
    case 'saveFailed':
      if (session.savePending?.seq === m.seq) session.savePending = null;
      renderSaveFailed(ctx, m.message);
      return;
    case 'runResult':
      if (acceptRun(session, m)) views.run.show(m.outcome, null, m.seq);
      return;
    case 'grid':
      views.run.receive(m.seq, m.id, m.message);
      return;
    case 'runFailed':
      if (acceptRun(session, m)) views.run.show(null, m.message);
      return;
    case 'error':
      say(ctx, m.message, 'error');
      return;
  }
}
