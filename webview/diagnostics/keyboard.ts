// The panel's shortcuts outside text fields (r back to the run, o open a file, p the panel picker, f the filter,
// ? the help): keys.ts says which action a key means, this does it.
import { toggleHelp } from './header';
import type { DiagnosticsContext } from './context';
import { type PanelAction, panelAction } from './keys';

function focusById(id: string): void {
  (document.getElementById(id) as HTMLElement | null)?.focus();
}

function perform(ctx: DiagnosticsContext, action: PanelAction): void {
  switch (action) {
    case 'showRun':
      ctx.host.post({ type: 'showRun' });
      return;
    case 'openFile':
      ctx.host.post({ type: 'openFile' });
      return;
    case 'focusPicker':
      focusById('panel-picker');
      return;
    case 'focusFilter':
      focusById('filter');
      return;
    case 'toggleHelp':
      toggleHelp(ctx);
      return;
  }
}

export function bindKeys(ctx: DiagnosticsContext): void {
  window.addEventListener('keydown', (e) => {
    const target = e.target as HTMLElement | null;
    const typing = !!(
      target &&
      (target.tagName === 'INPUT' ||
        target.tagName === 'TEXTAREA' ||
        target.closest('vscode-text-field, vscode-text-area'))
    );
    const action = panelAction(
      { key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey, altKey: e.altKey, typing },
      ctx.app.saved,
    );
    if (!action) return;
    e.preventDefault();
    perform(ctx, action);
  });
}
