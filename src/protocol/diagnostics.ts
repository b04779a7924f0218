// The reward diagnostics panel's message protocol, shared by the extension host (src/extension/diagnostics) and the
// webview app (webview/diagnostics/main.ts). The host scores (core reward engine, sandbox pool) and sends plain data;
// the app only draws it and asks the host to act. Nothing here imports `vscode` or the DOM.
import type { MessageRules } from './validate';
import type { RunDiagnostics } from '../core/rewards/report';
import type { TrajectoryDiagnostics } from '../core/rewards/trajectoryReport';
import type { MismatchReport, MismatchScope, MismatchSql } from '../core/rewards/mismatch';

export type { MismatchReport, MismatchScope, RunDiagnostics, TrajectoryDiagnostics };

/** What is being diagnosed: a trajectory file, and the panel it was scored with. */
export interface SourceInfo {
  /** Absolute path of the trajectory file. */
  file: string;
  /** Short name for the header (workspace-relative path). */
  label: string;
  /** Records in the file (valid ones). */
  records: number;
  /** Lines that were not valid records, with why (first few). */
  invalid: string[];
}

/** The panel picker: built-in names, plus the user's panel file when one was chosen. */
export interface PanelChoice {
  value: string;
  label: string;
}

/** Host → app. */
export type ToApp =
  | { type: 'panels'; panels: PanelChoice[]; selected: string }
  | { type: 'busy'; text: string }
  | { type: 'run'; source: SourceInfo; run: RunDiagnostics }
  | {
      type: 'trajectory';
      source: SourceInfo;
      trajectory: TrajectoryDiagnostics /** A run view exists to go back to. */;
      hasRun: boolean;
    }
  | { type: 'error'; text: string };

/** App → host. Every one is checked with DIAGNOSTICS_RULES plus diagnosticsMessageProblem before the host acts. */
export type ToHost =
  | { type: 'ready' }
  /** A built-in panel name, or the value of a panel file offered in `panels`. */
  | { type: 'setPanel'; panel: string }
  | { type: 'pickPanelFile' }
  | { type: 'openFile' }
  | { type: 'openTrajectory'; id: string }
  | { type: 'openReplay'; id: string }
  | { type: 'showRun' }
  /** Which SQL of each trajectory the ODT mismatch rates (Progress-SQL Table 8) compare. */
  | { type: 'setMismatchSql'; sql: string };

export const DIAGNOSTICS_RULES: MessageRules<ToHost> = {
  ready: {},
  setPanel: { panel: 'string' },
  pickPanelFile: {},
  openFile: {},
  openTrajectory: { id: 'string' },
  openReplay: { id: 'string' },
  showRun: {},
  setMismatchSql: { sql: 'string' },
};

/** The choices of setMismatchSql: the final SQL, or the first (a multi-turn rollout's Round 1 answer). */
export const MISMATCH_SQL_CHOICES: ReadonlyArray<{ value: MismatchSql; label: string }> = [
  { value: 'final', label: 'final SQL' },
  { value: 'first', label: 'first SQL (before any feedback)' },
];

const MAX_ID_CHARS = 1000;

/**
 * What the field types alone cannot say: a panel must be one the host offered, an id must be short and non-empty.
 * Null when the message is fine.
 */
export function diagnosticsMessageProblem(msg: ToHost, offeredPanels: readonly string[]): string | null {
  if (msg.type === 'setPanel' && !offeredPanels.includes(msg.panel)) {
    return (
      `setPanel: ${JSON.stringify(msg.panel.slice(0, 80))} is not one of the offered panels ` +
      `(${offeredPanels.join(', ')})`
    );
  }
  if (msg.type === 'openTrajectory' || msg.type === 'openReplay') {
    if (msg.id === '') return `${msg.type}: empty id`;
    if (msg.id.length > MAX_ID_CHARS) return `${msg.type}: id longer than ${MAX_ID_CHARS} characters`;
  }
  if (msg.type === 'setMismatchSql' && !MISMATCH_SQL_CHOICES.some((c) => c.value === msg.sql)) {
    const choices = MISMATCH_SQL_CHOICES.map((c) => c.value).join(', ');
    return `setMismatchSql: ${JSON.stringify(msg.sql.slice(0, 80))} is not one of ${choices}`;
  }
  return null;
}

/** Keyboard shortcuts the panel documents and handles (key as KeyboardEvent.key). */
export const SHORTCUTS: ReadonlyArray<{ key: string; does: string }> = [
  { key: 'r', does: 'back to the run view' },
  { key: 'o', does: 'open another trajectory file' },
  { key: 'p', does: 'focus the panel picker' },
  { key: 'f', does: 'focus the trajectory filter (run view)' },
  { key: '↑ ↓ PageUp PageDown Home End', does: 'in the trajectory list: move the active row' },
  { key: 'Enter', does: 'on a trajectory or flag item: open it here' },
  { key: 'Shift+Enter', does: 'on a trajectory: open it in the replay view' },
  { key: '?', does: 'show or hide this help' },
];

/** The app's saved state (host.saveState): the last data shown, so hiding and showing the panel redraws at once. */
export interface DiagnosticsState {
  panels: PanelChoice[];
  selected: string;
  source: SourceInfo | null;
  run: RunDiagnostics | null;
  trajectory: TrajectoryDiagnostics | null;
  view: 'empty' | 'run' | 'trajectory';
  hasRun: boolean;
  filter: string;
  help: boolean;
}
