// The job panel's message protocol, shared by the extension host (src/extension/jobs/panel.ts) and the webview
// app (webview/jobs/main.ts). The host follows the job's folder (job.json, logs, metrics, checkpoints) and sends plain
// data as it changes; the app draws it (header, charts, log tail, checkpoints) and asks the host to act. Every message
// from the app is checked (JOBS_RULES, jobsMessageProblem) before the host acts. No `vscode`, Node or DOM.
import type { MetricRow } from '../core/training/metricsReader';
import { asObject, fieldProblem, type MessageRules } from './validate';

export type { MetricRow };

/** What the header shows of a job. */
export interface JobHeader {
  id: string;
  name: string;
  status: string;
  target: string;
  engine: string | null;
  recipe: string | null;
  model: string | null;
  data: string | null;
  command: string;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  exitCode: number | null;
  reason: string | null;
  latestStep: number | null;
  /** The metrics files followed, and the format each was read as (null: nothing read from it yet). */
  metricsFiles: Array<{ file: string; format: string | null }>;
}

export interface CheckpointInfo {
  name: string;
  path: string;
  step: number;
  engine: string;
  loadable: boolean;
  note: string | null;
}

/** A job offered for the overlay. */
export interface JobChoice {
  id: string;
  label: string;
}

export type LogStream = 'stdout' | 'stderr';

/** Host → app. */
export type ToApp =
  | { type: 'job'; job: JobHeader; others: JobChoice[] }
  /** Metric rows of the job (`main`) or of the overlaid one; `reset`: these are all its rows, drop the ones held. */
  | { type: 'metrics'; which: 'main' | 'overlay'; rows: MetricRow[]; reset: boolean }
  | { type: 'overlay'; job: JobHeader | null }
  /** Log text appended to a stream (`reset`: the tail starts over with this text). */
  | { type: 'log'; stream: LogStream; text: string; reset: boolean }
  | { type: 'checkpoints'; checkpoints: CheckpointInfo[] }
  | { type: 'error'; text: string };

/** App → host. */
export type ToHost =
  | { type: 'ready' }
  /** Another job to overlay (an id offered in `others`), or '' for none. */
  | { type: 'setOverlay'; id: string }
  | { type: 'cancel' }
  | { type: 'openLogs'; stream: string }
  | { type: 'openFolder' }
  /** Shows a checkpoint folder (a path offered in `checkpoints`) in the explorer. */
  | { type: 'revealCheckpoint'; path: string }
  /** Loads a checkpoint (an offered, loadable one) into the editor: Quarry: Load Checkpoint… on it. */
  | { type: 'loadCheckpoint'; path: string };

export const JOBS_RULES: MessageRules<ToHost> = {
  ready: {},
  setOverlay: { id: 'string' },
  cancel: {},
  openLogs: { stream: 'string' },
  openFolder: {},
  revealCheckpoint: { path: 'string' },
  loadCheckpoint: { path: 'string' },
};

const JOB_ID = /^[\w.-]{1,200}$/;

/** What the field types cannot say: the overlay must be an offered job, the path an offered checkpoint. */
export function jobsMessageProblem(
  msg: ToHost,
  offered: { jobs: readonly string[]; checkpoints: readonly string[] },
): string | null {
  if (msg.type === 'setOverlay' && msg.id !== '' && !offered.jobs.includes(msg.id)) {
    return `setOverlay: ${JSON.stringify(msg.id.slice(0, 80))} is not one of the offered jobs`;
  }
  if (msg.type === 'openLogs' && msg.stream !== 'stdout' && msg.stream !== 'stderr') {
    return `openLogs: stream must be stdout or stderr, is ${JSON.stringify(msg.stream.slice(0, 40))}`;
  }
  if ((msg.type === 'revealCheckpoint' || msg.type === 'loadCheckpoint') && !offered.checkpoints.includes(msg.path)) {
    return `${msg.type}: ${JSON.stringify(msg.path.slice(0, 200))} is not one of the job's checkpoints`;
  }
  return null;
}

/** The app's saved state: which job, what it overlays, the zoom, the log stream shown. */
export interface JobsState {
  jobId: string;
  overlayId: string | null;
  range: { from: number; to: number } | null;
  stream: LogStream;
  help: boolean;
  /** The charts' smoothing weight (0–0.99, TensorBoard's slider); absent in state saved before it existed. */
  smoothing?: number;
  /** The charts' value axis is logarithmic. */
  logScale?: boolean;
}

/** The part of the saved state the host uses after a reload, checked like a message. */
export function jobsRestore(
  raw: unknown,
): { ok: true; value: { jobId: string; overlayId: string | null } } | { ok: false; error: string } {
  const o = asObject(raw);
  if (!o) return { ok: false, error: 'the job panel state is not an object' };
  const problem = fieldProblem(o, { jobId: 'string', overlayId: 'string?' }, 'job panel state', true);
  if (problem) return { ok: false, error: problem };
  const jobId = o.jobId as string;
  const overlayId = (o.overlayId as string | undefined) ?? null;
  if (!JOB_ID.test(jobId))
    return { ok: false, error: `job panel state: ${JSON.stringify(jobId.slice(0, 80))} is no job id` };
  if (overlayId !== null && !JOB_ID.test(overlayId)) {
    return { ok: false, error: `job panel state: overlay ${JSON.stringify(overlayId.slice(0, 80))} is no job id` };
  }
  return { ok: true, value: { jobId, overlayId } };
}

/** Keyboard shortcuts the panel documents and handles (key as KeyboardEvent.key). */
export const JOBS_SHORTCUTS: ReadonlyArray<{ key: string; does: string }> = [
  { key: '+ / -', does: 'on a chart: zoom the step range in or out (every chart follows)' },
  { key: '← →', does: 'on a chart: move the step range' },
  { key: '0', does: 'show all steps again' },
  { key: 'l', does: 'focus the log tail' },
  { key: 'o', does: 'focus the overlay picker' },
  { key: '?', does: 'show or hide this help' },
];
