// What the reviewer does: edit the form, set a verdict (and move on), toggle or add a tag, save, run the corrected
// SQL, move through the queue, show the shortcuts. session.ts decides what each changes; this draws and sends it.
import type { Verdict } from '../../src/protocol/labeling';
import { formText, type LabelContext, persist } from './context';
import { tagName } from './labelText';
import type { RunResult } from './runResult';
import { hasNext, isDirty, moveTarget, recordEdit, runRequest, saveRequest, toggleTag } from './session';
import { renderStatus, renderTags, renderVerdict } from './views';

export interface Actions {
  edited(): void;
  setVerdict(v: Verdict): void;
  verdictAndNext(v: Verdict): void;
  toggleTag(name: string): void;
  addTag(): void;
  useFinal(): void;
  save(): void;
  runSql(): void;
  go(delta: number): void;
  toggleHelp(show?: boolean): void;
  /** Draws the tag chips (each toggles its tag). */
  renderTags(): void;
}

export function createActions(ctx: LabelContext, run: RunResult): Actions {
  const { session, form, host } = ctx;
  const a: Actions = {
    edited() {
      if (!recordEdit(session, formText(ctx))) return;
      persist(ctx);
      renderStatus(ctx);
    },
    setVerdict(v) {
      if (!session.record) return;
      session.verdict = v;
      renderVerdict(ctx);
      a.edited();
      a.save();
    },
    /** A verdict key: sets the verdict, saves it and goes to the next item (the last one just saves). */
    verdictAndNext(v) {
      if (!session.record) return;
      session.verdict = v;
      renderVerdict(ctx);
      a.edited();
      // go() saves the dirty draft before it moves, so the label is written once.
      if (hasNext(session)) a.go(1);
      else a.save();
    },
    toggleTag(name) {
      toggleTag(session, name);
      const focused = (document.activeElement as HTMLElement | null)?.dataset?.tag;
      a.renderTags();
      a.edited();
      if (focused) (form.tagRow.querySelector(`[data-tag="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
    },
    addTag() {
      const name = tagName(form.newTag.value);
      if (!name) return;
      form.newTag.value = '';
      host.post({ type: 'addTag', name });
      session.tags.add(name);
      a.renderTags();
      a.edited();
    },
    useFinal() {
      const sql = session.record?.finalSql;
      if (sql) {
        form.sqlBox.value = sql;
        a.edited();
        form.sqlBox.focus();
      }
    },
    save() {
      if (!session.record) return;
      const m = saveRequest(session, formText(ctx));
      if (m) host.post(m);
      renderStatus(ctx);
    },
    runSql() {
      const m = runRequest(session, form.sqlBox.value);
      if (!m) return;
      if ('error' in m) {
        run.show(null, m.error);
        return;
      }
      run.running();
      host.post(m);
    },
    go(delta) {
      const to = moveTarget(session, delta);
      if (to === null) return;
      if (isDirty(session)) a.save();
      host.post({ type: 'go', position: to });
    },
    toggleHelp(show) {
      session.saved.showHelp = show ?? ctx.ui.help.hidden;
      ctx.ui.help.hidden = !session.saved.showHelp;
      persist(ctx);
    },
    renderTags() {
      renderTags(ctx, (name) => a.toggleTag(name));
    },
  };
  return a;
}
