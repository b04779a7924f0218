// What every view of the diagnostics app is handed: the channel to the host, the state, the page's skeleton and
// the way to draw the whole page again. Views take it as an argument instead of reaching for module-level variables.
import type { Host } from '../shared/host';
import type { DiagnosticsState, ToApp, ToHost } from '../../src/protocol/diagnostics';
import type { Layout } from './layout';
import type { DiagnosticsApp } from './state';

export interface DiagnosticsContext {
  readonly host: Host<ToHost, ToApp, DiagnosticsState>;
  readonly app: DiagnosticsApp;
  readonly ui: Layout;
  /** Draws the header, help, status and content again from the state. */
  render(): void;
  /** Saves the state now. */
  persist(): void;
  /** Saves once the user pauses: the state holds the whole run and is copied on every save (typing in the filter). */
  persistSoon(): void;
}

/** The context's two ways to save, the second one debounced. */
export function persister(save: () => void): Pick<DiagnosticsContext, 'persist' | 'persistSoon'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    persist: save,
    persistSoon: () => {
      clearTimeout(timer);
      timer = setTimeout(save, 300);
    },
  };
}
