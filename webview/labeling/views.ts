// Draws the parts that follow the session: the banner, the toolbar's progress and position, the verdict buttons,
// the tag chips and the status line.
import { h, setDisabled } from '../shared/components';
import type { Verdict } from '../../src/protocol/labeling';
import type { LabelContext } from './context';
import { progressText, statusText, tagChoices, whereText } from './labelText';

export function say(ctx: LabelContext, text: string, kind: 'info' | 'warn' | 'error' = 'info'): void {
  ctx.ui.banner.replaceChildren(
    text
      ? h('div', { class: `l-banner${kind === 'error' ? ' q-error' : kind === 'warn' ? ' q-warn' : ''}` }, text)
      : '',
  );
}

export function renderHead(ctx: LabelContext): void {
  const { queue, saved } = ctx.session;
  const { title, progress, where, filterBox, prevBtn, nextBtn } = ctx.ui;
  if (!queue) return;
  title.textContent = `Labeling: ${queue.fileLabel}`;
  title.setAttribute('title', queue.file);
  progress.textContent = progressText(queue);
  where.textContent = whereText(queue, saved.position);
  if (filterBox.value !== queue.filter) filterBox.value = queue.filter;
  setDisabled(prevBtn, saved.position <= 0);
  setDisabled(nextBtn, saved.position >= queue.size - 1);
}

/** Presses the session's verdict button (and releases the others). */
export function renderVerdict(ctx: LabelContext): void {
  const v: Verdict | '' = ctx.session.verdict;
  for (const [name, b] of ctx.form.verdictButtons) b.setAttribute('aria-pressed', String(name === v));
}

export function renderTags(ctx: LabelContext, onToggle: (name: string) => void): void {
  const { allTags, tags } = ctx.session;
  ctx.form.tagRow.replaceChildren(
    ...tagChoices(allTags, tags).map((t, i) => {
      const b = h(
        'button',
        {
          class: 'l-chip',
          type: 'button',
          'aria-pressed': String(tags.has(t.name)),
          'data-tag': t.name,
          tabindex: i === 0 ? 0 : -1,
          title: t.builtin ? 'built-in failure mode' : 'added by a reviewer',
        },
        t.name,
      );
      b.addEventListener('click', () => onToggle(t.name));
      return b;
    }),
  );
}

export function renderStatus(ctx: LabelContext): void {
  const s = ctx.session;
  const { status } = ctx.form;
  status.textContent = statusText({
    saving: s.savePending !== null,
    dirty: s.saved.draft?.dirty ?? false,
    label: s.label,
    lastSavedAt: s.lastSavedAt,
  });
  status.className = 'l-status q-muted';
}

/** A save the host refused: said in the status line until the next change. */
export function renderSaveFailed(ctx: LabelContext, message: string): void {
  renderStatus(ctx);
  ctx.form.status.textContent = `Not saved: ${message}`;
  ctx.form.status.className = 'l-status q-error';
}
