// The labeling app's state, all in one object, and what each step does to it without the DOM: `saved` survives
// hide/show (host.saveState: position, the unsaved draft, the help); the rest is this session's — the queue, the
// trajectory shown and its stored label, the form's verdict and tags, and the numbers that match the host's answers
// to the save or run they answer (an answer to an older request, or about another trajectory, is dropped).
import type {
  Label,
  LabelAppState,
  QueueInfo,
  TagInfo,
  ToApp,
  ToHost,
  TrajectoryRecord,
  Verdict,
} from '../../src/protocol/labeling';

export interface LabelSession {
  saved: LabelAppState;
  queue: QueueInfo | null;
  record: TrajectoryRecord | null;
  label: Label | null;
  allTags: TagInfo[];
  /** The form: the verdict pressed and the tags chosen (the SQL and the note are the text fields' own). */
  verdict: Verdict | '';
  tags: Set<string>;
  /** Number of the last save or run sent. */
  seq: number;
  /** Edits since the item was shown; a save covers the edits made before it was sent. */
  editVersion: number;
  savePending: { seq: number; version: number } | null;
  runPending: number | null;
  lastSavedAt: string | null;
}

/** The form's text fields. */
interface FormText {
  correctedSql: string;
  note: string;
}

/** What the form shows for an item. */
interface FormValues extends FormText {
  verdict: Verdict | '';
  tags: string[];
}

export function initialSession(saved: LabelAppState | undefined): LabelSession {
  return {
    saved: saved ?? { position: 0, id: null, draft: null, showHelp: false },
    queue: null,
    record: null,
    label: null,
    allTags: [],
    verdict: '',
    tags: new Set(),
    seq: 0,
    editVersion: 0,
    savePending: null,
    runPending: null,
    lastSavedAt: null,
  };
}

/** The form changed: the draft becomes what it holds, unsaved. False when no trajectory is shown. */
export function recordEdit(s: LabelSession, text: FormText): boolean {
  if (!s.record) return false;
  s.editVersion++;
  s.saved.draft = { id: s.record.id, verdict: s.verdict, ...text, tags: [...s.tags].sort(), dirty: true };
  return true;
}

/** Whether the shown trajectory has unsaved edits. */
export function isDirty(s: LabelSession): boolean {
  return !!(s.saved.draft?.dirty && s.record && s.saved.draft.id === s.record.id);
}

/**
 * The save message for what the form holds, or null when there is nothing to save (no trajectory, or no draft of
 * this one): the save is numbered and remembered with the edits it covers.
 */
export function saveRequest(s: LabelSession, text: FormText): Extract<ToHost, { type: 'save' }> | null {
  if (!s.record || !s.saved.draft || s.saved.draft.id !== s.record.id) return null;
  const seq = ++s.seq;
  s.savePending = { seq, version: s.editVersion };
  return { type: 'save', seq, id: s.record.id, verdict: s.verdict, ...text, tags: [...s.tags].sort() };
}

/** The run message for the corrected SQL (numbered; only its answer is shown), or why it cannot run. */
export function runRequest(s: LabelSession, sql: string): Extract<ToHost, { type: 'run' }> | { error: string } | null {
  if (!s.record) return null;
  if (sql.trim() === '') return { error: 'Write a corrected SQL first (e), or start from the final SQL.' };
  s.runPending = ++s.seq;
  return { type: 'run', seq: s.runPending, id: s.record.id, sql };
}

/** The queue position `delta` items away (clamped to the queue), or null when that is where the reviewer is. */
export function moveTarget(s: LabelSession, delta: number): number | null {
  if (!s.queue || s.queue.size === 0) return null;
  const to = Math.min(Math.max(0, s.saved.position + delta), s.queue.size - 1);
  return to === s.saved.position ? null : to;
}

/** Whether a verdict key moves on after setting the verdict (the last item just saves). */
export function hasNext(s: LabelSession): boolean {
  return !!s.queue && s.saved.position < s.queue.size - 1;
}

/**
 * The host shows an item: it becomes the current one, and the form shows its unsaved draft (kept while the panel
 * was hidden) or else its stored label. `sameItem` when it was already shown (a refresh after a save elsewhere).
 */
export function openItem(
  s: LabelSession,
  position: number,
  record: TrajectoryRecord,
  label: Label | null,
): { sameItem: boolean; form: FormValues } {
  const sameItem = s.record?.id === record.id;
  s.record = record;
  s.label = label;
  s.saved.position = position;
  s.saved.id = record.id;
  s.editVersion = 0;
  s.savePending = null;
  if (!sameItem) {
    s.lastSavedAt = null;
    s.runPending = null;
  }
  const d = s.saved.draft && s.saved.draft.id === record.id && s.saved.draft.dirty ? s.saved.draft : null;
  if (!d) s.saved.draft = null;
  const form: FormValues = d
    ? { verdict: d.verdict, correctedSql: d.correctedSql, note: d.note, tags: d.tags }
    : {
        verdict: label?.verdict ?? '',
        correctedSql: label?.correctedSql ?? '',
        note: label?.note ?? '',
        tags: label?.tags ?? [],
      };
  s.verdict = form.verdict;
  s.tags = new Set(form.tags);
  return { sameItem, form };
}

/**
 * The host saved a label. True when it is the shown trajectory's: its label is now the stored one, and the draft
 * is clean unless the reviewer edited after the save was sent.
 */
export function acceptSaved(s: LabelSession, m: Extract<ToApp, { type: 'saved' }>): boolean {
  if (s.queue) s.queue.labeled = m.labeled;
  if (s.record?.id !== m.id) return false;
  s.label = m.label;
  if (s.savePending?.seq === m.seq) {
    if (s.savePending.version === s.editVersion && s.saved.draft) s.saved.draft.dirty = false;
    s.savePending = null;
  }
  s.lastSavedAt = m.label.updatedAt;
  return true;
}

/** Whether a run's answer is for the run the reviewer is waiting on (or, restored, the newest one of this item). */
export function acceptRun(s: LabelSession, m: Extract<ToApp, { type: 'runResult' | 'runFailed' }>): boolean {
  if (s.record?.id !== m.id) return false;
  if (m.type === 'runResult' && m.restored && s.runPending === null) {
    // The newest run, sent again after this webview reloaded: later runs number after it.
    s.seq = Math.max(s.seq, m.seq);
    return true;
  }
  return m.seq === s.runPending;
}

/** A tag chip pressed: chosen or not. */
export function toggleTag(s: LabelSession, name: string): void {
  if (s.tags.has(name)) s.tags.delete(name);
  else s.tags.add(name);
}
