// The header's counts and scoring progress, and the notice line under the filters (hints, errors, the file's bad and
// unfinished lines).
import { h, setDisabled } from '../shared/components';
import type { ReplayContext } from './context';
import { scoreStatusText } from './scoreText';

export function renderCounts({ state, ui }: ReplayContext): void {
  const shown = `${state.keys.length.toLocaleString()} of ${state.total.toLocaleString()} trajectories`;
  ui.counts.textContent = state.total === 0 ? '' : shown;
  const s = state.scoring;
  ui.scoreStatus.textContent = scoreStatusText(s);
  ui.scoreButton.textContent = s.running ? 'Stop scoring' : 'Score all';
  setDisabled(ui.scoreButton, state.total === 0 || (!s.running && s.done >= s.total));
}

export function renderNotice({ state, ui }: ReplayContext): void {
  const parts: Node[] = [];
  const m = state.message;
  if (m) parts.push(h('div', { class: m.error ? 'q-error' : 'q-muted', role: m.error ? 'alert' : 'status' }, m.text));
  const invalid = state.invalid;
  if (invalid.length) {
    const more = invalid.length > 200 ? `\n… and ${invalid.length - 200} more` : '';
    parts.push(
      h(
        'details',
        {},
        h('summary', { class: 'q-warn' }, `${invalid.length} invalid line(s) skipped`),
        h(
          'pre',
          {},
          invalid
            .slice(0, 200)
            .map((b) => b.message)
            .join('\n') + more,
        ),
      ),
    );
  }
  if (state.truncated) parts.push(h('div', { class: 'q-warn' }, state.truncated));
  ui.notice.replaceChildren(...parts);
}

/** Shows a hint (or an error) in the notice line. */
export function say(ctx: ReplayContext, text: string, error = false): void {
  ctx.state.message = { text, error };
  renderNotice(ctx);
}
