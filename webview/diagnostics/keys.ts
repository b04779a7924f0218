// The panel's own keys without the DOM: which action a key pressed outside a text field means in the current view
// (the list's arrow keys are listModel.ts's). The shortcuts' help lists the same keys (SHORTCUTS in the protocol).
import type { DiagnosticsState } from '../../src/protocol/diagnostics';

export type PanelAction = 'showRun' | 'openFile' | 'focusPicker' | 'focusFilter' | 'toggleHelp';

interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  /** The key went to a text field or text area: it is typing, not a shortcut. */
  typing: boolean;
}

/** The action for a key press, or null when the key is not a shortcut here. */
export function panelAction(e: KeyPress, state: Pick<DiagnosticsState, 'view' | 'hasRun'>): PanelAction | null {
  if (e.typing || e.ctrlKey || e.metaKey || e.altKey) return null;
  if (e.key === 'r' && state.view === 'trajectory' && state.hasRun) return 'showRun';
  if (e.key === 'o') return 'openFile';
  if (e.key === 'p') return 'focusPicker';
  if (e.key === 'f' && state.view === 'run') return 'focusFilter';
  if (e.key === '?') return 'toggleHelp';
  return null;
}
