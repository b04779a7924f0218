// The header (title, the file, the reward panel picker, the buttons), the shortcuts' help under it, and the status
// line (what the host is doing, or what went wrong).
import { button, dropdown, h, progressRing } from '../shared/components';
import { SHORTCUTS } from '../../src/protocol/diagnostics';
import type { DiagnosticsContext } from './context';

export function renderHeader(ctx: DiagnosticsContext): void {
  const { header } = ctx.ui;
  const state = ctx.app.saved;
  header.replaceChildren();
  header.append(h('strong', {}, 'Reward diagnostics'));
  if (state.source)
    header.append(
      h(
        'span',
        { class: 'q-muted', title: state.source.file },
        `${state.source.label} · ${state.source.records} records`,
      ),
    );
  const options = state.panels.length ? state.panels : [{ value: state.selected, label: state.selected }];
  const picker = dropdown(
    options,
    state.selected,
    (v) => {
      state.selected = v;
      ctx.persist();
      ctx.host.post({ type: 'setPanel', panel: v });
    },
    'panel-picker',
  );
  picker.setAttribute('aria-label', 'Reward panel');
  header.append(h('label', { for: 'panel-picker' }, 'Panel'), picker);
  header.append(
    button('Panel file…', () => ctx.host.post({ type: 'pickPanelFile' }), {
      appearance: 'secondary',
      title: 'Score with a panel JSON file',
    }),
  );
  header.append(
    button('Open file…', () => ctx.host.post({ type: 'openFile' }), {
      appearance: 'secondary',
      title: 'Diagnose another trajectory file (o)',
      id: 'open-file',
    }),
  );
  if (state.view === 'trajectory' && state.hasRun) {
    header.append(
      button('Back to run', () => ctx.host.post({ type: 'showRun' }), {
        appearance: 'secondary',
        title: 'Back to the run view (r)',
        id: 'back',
      }),
    );
  }
  header.append(
    button(state.help ? 'Hide keys' : 'Keys', () => toggleHelp(ctx), {
      appearance: 'secondary',
      title: 'Keyboard shortcuts (?)',
      id: 'keys',
    }),
  );
}

export function renderHelp(ctx: DiagnosticsContext): void {
  const { helpBox } = ctx.ui;
  helpBox.hidden = !ctx.app.saved.help;
  helpBox.replaceChildren(
    h('h3', {}, 'Keyboard'),
    h(
      'ul',
      { class: 'd-help' },
      ...SHORTCUTS.map((s) => h('li', {}, h('kbd', {}, s.key), ` ${s.does}`)),
      h(
        'li',
        {},
        h('kbd', {}, 'Tab'),
        ' moves through the picker, the buttons, the flag items and the trajectory list (one stop)',
      ),
    ),
  );
}

export function toggleHelp(ctx: DiagnosticsContext): void {
  ctx.app.saved.help = !ctx.app.saved.help;
  ctx.persist();
  renderHeader(ctx);
  renderHelp(ctx);
}

export function renderStatus(ctx: DiagnosticsContext): void {
  const { statusBox } = ctx.ui;
  const status = ctx.app.status;
  statusBox.replaceChildren();
  if (!status) return;
  if (status.kind === 'busy')
    statusBox.append(h('div', { class: 'q-row' }, progressRing(), h('span', {}, status.text)));
  else statusBox.append(h('div', { class: 'q-card q-error', role: 'alert' }, status.text));
}
