// The diagnostics app's state: `saved` is what survives hide/show (host.saveState: the last data shown, the panel,
// the filter), `status` what the host is doing or what went wrong (not saved: a restored panel asks the host again).
// A message from the host changes it here, without the DOM, and says what to draw again.
import type { DiagnosticsState, ToApp } from '../../src/protocol/diagnostics';

interface Status {
  kind: 'busy' | 'error';
  text: string;
}

export interface DiagnosticsApp {
  saved: DiagnosticsState;
  status: Status | null;
}

export function initialApp(saved: DiagnosticsState | undefined): DiagnosticsApp {
  return {
    saved: saved ?? {
      panels: [],
      selected: 'sqltrail',
      source: null,
      run: null,
      trajectory: null,
      view: 'empty',
      hasRun: false,
      filter: '',
      help: false,
    },
    status: null,
  };
}

/**
 * What a message changed: the header (panel choices; saved), the status line only (not saved), or the whole page
 * (a run or a trajectory; saved, and the page scrolls back to its top).
 */
type Redraw = 'header' | 'status' | 'page';

export function applyMessage(app: DiagnosticsApp, m: ToApp): Redraw {
  const state = app.saved;
  switch (m.type) {
    case 'panels':
      state.panels = m.panels;
      state.selected = m.selected;
      return 'header';
    case 'busy':
    case 'error':
      app.status = { kind: m.type, text: m.text };
      return 'status';
    case 'run':
      app.status = null;
      // Another file: its own list, unfiltered.
      if (state.source?.file !== m.source.file) state.filter = '';
      state.source = m.source;
      state.run = m.run;
      state.trajectory = null;
      state.view = 'run';
      state.hasRun = true;
      return 'page';
    case 'trajectory':
      app.status = null;
      state.source = m.source;
      state.trajectory = m.trajectory;
      state.hasRun = m.hasRun;
      if (!m.hasRun) state.run = null;
      state.view = 'trajectory';
      return 'page';
  }
}
