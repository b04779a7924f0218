// The labeling panel's app: one trajectory at a time from the host's review queue — question, database, turns (SQL
// highlighted, observations), final SQL — and the label form: verdict, corrected SQL with Run (the match, then the
// whole result in a paged grid the host pages, sorts and filters in SQLite), failure-mode tags, note. Keyboard first
// (see SHORTCUTS): j/k or n/p move, 1/2/3 set the verdict, save, move on, e edits the corrected SQL, Ctrl+Enter runs
// it, t goes to the tags, s saves, ? shows the shortcuts. Unsaved edits and the position survive the panel being
// hidden (host.saveState).
import { connectHost } from '../shared/host';
import { registerComponents, h, button, dropdown, setDisabled } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import { pagedGrid, type PagedGrid } from '../shared/pagedGrid';
import { QUEUE_FILTERS, SHORTCUTS } from '../../src/protocol/labeling';
import type {
  LabelAppState,
  Label,
  QueueInfo,
  RunOutcome,
  TagInfo,
  ToApp,
  ToHost,
  TrajectoryRecord,
  Verdict,
} from '../../src/protocol/labeling';

registerComponents();
const host = connectHost<ToHost, ToApp, LabelAppState>();

const state: LabelAppState = host.state() ?? { position: 0, id: null, draft: null, showHelp: false };
let queue: QueueInfo | null = null;
let record: TrajectoryRecord | null = null;
let label: Label | null = null;
let allTags: TagInfo[] = [];
let seq = 0;
/** Edits since the item was shown; a save covers the edits made before it was sent. */
let editVersion = 0;
let savePending: { seq: number; version: number } | null = null;
let runPending: number | null = null;
/** The paged grid of the newest run's result: the host pages the whole result in SQLite for it. */
let runGrid: { seq: number; id: string; grid: PagedGrid } | null = null;
let lastSavedAt: string | null = null;

function persist(): void {
  host.saveState(state);
}

document.head.append(
  h(
    'style',
    {},
    `
#app { max-width: 1100px; }
.l-head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; padding: 8px 0; ` +
      `position: sticky; top: 0; z-index: 2;
  background: var(--vscode-editor-background); border-bottom: 1px solid var(--vscode-panel-border, #8884); }
.l-head h1 { font-size: 1.1em; margin: 0 8px 0 0; font-weight: 600; }
.l-progress { font-weight: 600; }
.l-grid { display: grid; grid-template-columns: minmax(0, 3fr) minmax(300px, 2fr); gap: 12px; align-items: start; }
@media (max-width: 800px) { .l-grid { grid-template-columns: minmax(0, 1fr); } }
.l-form { position: sticky; top: 48px; }
.l-question { font-size: 1.15em; margin: 4px 0; }
.l-meta { display: flex; gap: 12px; flex-wrap: wrap; color: var(--vscode-descriptionForeground); }
.q-card h3 { font-size: 1em; margin: 2px 0 4px; }
.l-obs { max-height: 220px; overflow: auto; }
.l-verdicts { display: flex; gap: 6px; flex-wrap: wrap; }
.l-chip { font: inherit; border-radius: 10px; padding: 2px 10px; cursor: pointer; ` +
      `border: 1px solid var(--vscode-button-border, var(--vscode-panel-border, #8884));
  background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
.l-chip[aria-pressed="true"] { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.l-verdict { font: inherit; padding: 4px 12px; cursor: pointer; border-radius: 2px; ` +
      `border: 1px solid var(--vscode-button-border, var(--vscode-panel-border, #8884));
  background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
/* Pressed: the theme's primary button colours (readable in every theme) with the verdict's colour as a bar. */
.l-verdict[aria-pressed="true"] { background: var(--vscode-button-background); ` +
      `color: var(--vscode-button-foreground); font-weight: 600; }
.l-verdict[aria-pressed="true"][data-verdict="correct"] { ` +
      `box-shadow: inset 5px 0 0 var(--vscode-testing-iconPassed, #3a3); }
.l-verdict[aria-pressed="true"][data-verdict="incorrect"] { box-shadow: inset 5px 0 0 var(--vscode-errorForeground); }
.l-verdict[aria-pressed="true"][data-verdict="unsure"] { ` +
      `box-shadow: inset 5px 0 0 var(--vscode-editorWarning-foreground); }
.l-tags { display: flex; gap: 6px; flex-wrap: wrap; margin: 4px 0; }
textarea.l-text, input.l-text { width: 100%; box-sizing: border-box; ` +
      `font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size);
  color: var(--vscode-input-foreground); background: var(--vscode-input-background); ` +
      `border: 1px solid var(--vscode-input-border, var(--vscode-panel-border, #8884)); padding: 4px; }
input.l-text { font-family: var(--vscode-font-family); width: auto; flex: 1; }
.l-status { min-height: 1.4em; }
.l-help { position: fixed; right: 16px; top: 56px; z-index: 5; ` +
      `background: var(--vscode-editorWidget-background); border: 1px solid var(--vscode-focusBorder); ` +
      `padding: 8px 14px; }
.l-help table td { padding: 1px 8px; }
kbd { font-family: var(--vscode-editor-font-family); border: 1px solid var(--vscode-panel-border, #8884); ` +
      `border-radius: 3px; padding: 0 4px; }
.l-banner { padding: 4px 8px; border-left: 3px solid var(--vscode-editorWarning-foreground); margin: 6px 0; }
.l-banner.q-error { border-left-color: var(--vscode-errorForeground); }
/* The run's grid: a page of up to 200 rows scrolls in its own box, beside the form's other fields. */
#l-grid .q-grid-scroll { max-height: 420px; overflow: auto; }
`,
  ),
);

// ---------------------------------------------------------------------------------------------------------------
// Layout

const root = document.getElementById('app')!;
const title = h('h1', {}, 'Labeling');
const progress = h('span', { class: 'l-progress', id: 'l-progress', 'aria-live': 'polite' }, '');
const where = h('span', { class: 'q-muted', id: 'l-where' }, '');
const filterBox = dropdown(
  QUEUE_FILTERS.map((f) => ({ value: f.value, label: f.label })),
  'unlabeled-first',
  (v) => host.post({ type: 'setFilter', filter: v }),
  'l-filter',
);
filterBox.setAttribute('aria-label', 'Which trajectories to review');
const prevBtn = button('‹ Previous', () => go(-1), {
  appearance: 'secondary',
  title: 'Previous trajectory (k or p)',
  id: 'l-prev',
});
const nextBtn = button('Next ›', () => go(1), {
  appearance: 'secondary',
  title: 'Next trajectory (j or n)',
  id: 'l-next',
});
const head = h(
  'div',
  { class: 'l-head', role: 'toolbar' },
  title,
  progress,
  where,
  filterBox,
  prevBtn,
  nextBtn,
  button('Export SFT…', () => host.post({ type: 'exportSft' }), {
    appearance: 'secondary',
    title: 'Write SFT JSONL from every label in the store',
  }),
  button('Export RL prompts…', () => host.post({ type: 'exportRl' }), {
    appearance: 'secondary',
    title: 'Write RL prompts JSONL for this file’s tasks',
  }),
  button('?', () => toggleHelp(), { appearance: 'icon', title: 'Keyboard shortcuts (?)', id: 'l-help-button' }),
);
const banner = h('div', { id: 'l-banner', 'aria-live': 'assertive' });
const trajectoryPane = h('div', { id: 'l-trajectory' });
const formPane = h('div', { class: 'l-form q-card', id: 'l-form', hidden: true });
const help = h(
  'div',
  { class: 'l-help', id: 'l-shortcuts', hidden: true, role: 'dialog', 'aria-label': 'Keyboard shortcuts' },
  h('strong', {}, 'Keyboard shortcuts'),
  h(
    'table',
    {},
    h('tbody', {}, ...SHORTCUTS.map(([k, w]) => h('tr', {}, h('td', {}, h('kbd', {}, k)), h('td', {}, w)))),
  ),
  h('div', { class: 'q-muted' }, 'Moving to another trajectory saves unsaved edits first.'),
);
root.append(head, banner, h('div', { class: 'l-grid' }, trajectoryPane, formPane), help);

// The form's parts are built once and refilled per trajectory, so focus and keyboard handling stay simple.
const verdictButtons = new Map<Verdict, HTMLButtonElement>();
const verdictRow = h('div', { class: 'l-verdicts', role: 'group', 'aria-label': 'Verdict' });
(['correct', 'incorrect', 'unsure'] as const).forEach((v, i) => {
  const b = h(
    'button',
    {
      class: 'l-verdict',
      type: 'button',
      'data-verdict': v,
      'aria-pressed': 'false',
      id: `l-verdict-${v}`,
      title: `${v} (${i + 1})`,
    },
    `${i + 1} · ${v[0].toUpperCase()}${v.slice(1)}`,
  );
  b.addEventListener('click', () => setVerdict(v));
  verdictButtons.set(v, b);
  verdictRow.append(b);
});
const sqlBox = h('textarea', {
  class: 'l-text',
  id: 'l-corrected',
  rows: 5,
  spellcheck: 'false',
  'aria-label': 'Corrected SQL (e); Ctrl+Enter runs it',
  placeholder: 'Corrected SQL, if the final SQL is wrong (e to edit, Ctrl+Enter to run)',
});
sqlBox.addEventListener('input', () => edited());
const runBtn = button('Run', () => runSql(), {
  appearance: 'primary',
  title: 'Run the corrected SQL in the sandbox (Ctrl+Enter)',
  id: 'l-run',
});
const useFinal = button(
  'Start from final SQL',
  () => {
    if (record?.finalSql) {
      sqlBox.value = record.finalSql;
      edited();
      sqlBox.focus();
    }
  },
  { appearance: 'secondary', id: 'l-use-final' },
);
const runOut = h('div', { id: 'l-run-result', 'aria-live': 'polite' });
const tagRow = h('div', { class: 'l-tags', role: 'group', 'aria-label': 'Failure-mode tags (t)', id: 'l-tags' });
const newTag = h('input', {
  class: 'l-text',
  id: 'l-new-tag',
  placeholder: 'new tag',
  'aria-label': 'New tag name',
  maxlength: 40,
});
newTag.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') {
    e.preventDefault();
    addTag();
  }
});
const noteBox = h('textarea', {
  class: 'l-text',
  id: 'l-note',
  rows: 3,
  'aria-label': 'Note',
  placeholder: 'Note (optional)',
});
noteBox.addEventListener('input', () => edited());
const saveBtn = button('Save', () => save(), { appearance: 'primary', title: 'Save the label (s)', id: 'l-save' });
const status = h('div', { class: 'l-status q-muted', id: 'l-status', 'aria-live': 'polite' });
let selectedTags = new Set<string>();

formPane.append(
  h('h3', {}, 'Verdict'),
  verdictRow,
  h('h3', {}, 'Corrected SQL'),
  sqlBox,
  h('div', { class: 'q-row' }, runBtn, useFinal),
  runOut,
  h('h3', {}, 'Failure modes'),
  tagRow,
  h(
    'div',
    { class: 'q-row' },
    newTag,
    button('+ Add tag', () => addTag(), { appearance: 'secondary', id: 'l-add-tag' }),
  ),
  h('h3', {}, 'Note'),
  noteBox,
  h('div', { class: 'q-row' }, saveBtn),
  status,
);

// ---------------------------------------------------------------------------------------------------------------
// Rendering

function say(text: string, kind: 'info' | 'warn' | 'error' = 'info'): void {
  banner.replaceChildren(
    text
      ? h('div', { class: `l-banner${kind === 'error' ? ' q-error' : kind === 'warn' ? ' q-warn' : ''}` }, text)
      : '',
  );
}

function renderHead(): void {
  if (!queue) return;
  title.textContent = `Labeling: ${queue.fileLabel}`;
  title.setAttribute('title', queue.file);
  progress.textContent = `${queue.labeled.toLocaleString()} / ${queue.total.toLocaleString()} labeled`;
  where.textContent =
    queue.size === 0
      ? 'queue empty'
      : `item ${(state.position + 1).toLocaleString()} of ${queue.size.toLocaleString()} in the queue`;
  if (filterBox.value !== queue.filter) filterBox.value = queue.filter;
  setDisabled(prevBtn, state.position <= 0);
  setDisabled(nextBtn, state.position >= queue.size - 1);
}

function dbName(r: TrajectoryRecord): string {
  return r.task.db.id ?? r.task.db.path.split(/[\\/]/).pop() ?? r.task.db.path;
}

function renderTrajectory(r: TrajectoryRecord, changed: boolean): void {
  const parts: Node[] = [];
  parts.push(
    h(
      'div',
      { class: 'q-card' },
      h('div', { class: 'l-question', id: 'l-question' }, r.task.question),
      h(
        'div',
        { class: 'l-meta' },
        h('span', { title: r.task.db.path }, `db: ${dbName(r)}`),
        h('span', {}, `protocol: ${r.protocol.name}`),
        h('span', {}, `model: ${r.model.spec}`),
        h(
          'span',
          {},
          `${r.turns.length} turn${r.turns.length === 1 ? '' : 's'}` +
            `${r.protocol.budget ? ` of ${r.protocol.budget}` : ''}`,
        ),
        h('span', { class: r.end === 'answer' ? undefined : 'q-warn' }, `ended: ${r.end}`),
        r.task.difficulty ? h('span', {}, `difficulty: ${r.task.difficulty}`) : null,
        h('span', { class: 'q-muted' }, r.id),
      ),
      r.task.evidence ? h('div', { class: 'q-muted' }, `Evidence: ${r.task.evidence}`) : null,
      r.task.history.length > 0
        ? h(
            'details',
            {},
            h('summary', {}, `${r.task.history.length} earlier question(s)`),
            ...r.task.history.map((x) => h('div', {}, h('div', {}, x.question), highlightSql(x.sql))),
          )
        : null,
      r.task.gold
        ? h('div', {}, h('span', { class: 'q-muted' }, 'Gold SQL'), highlightSql(r.task.gold))
        : h('div', { class: 'q-muted' }, 'No gold SQL: Run compares with the final SQL.'),
      changed
        ? h(
            'div',
            { class: 'q-warn' },
            'This trajectory changed since it was labeled (its fingerprint differs); check the label.',
          )
        : null,
      r.error ? h('div', { class: 'q-error' }, `Error: ${r.error}`) : null,
    ),
  );
  r.turns.forEach((t) => {
    const exec = t.exec;
    parts.push(
      h(
        'div',
        { class: 'q-card l-turn', id: `l-turn-${t.index}` },
        h('h3', {}, `Turn ${t.index + 1} · ${t.action.kind}`),
        t.action.thought ? h('details', {}, h('summary', {}, 'Reasoning'), h('pre', {}, t.action.thought)) : null,
        t.action.sql
          ? highlightSql(t.action.sql)
          : h('details', {}, h('summary', {}, 'Raw output'), h('pre', {}, t.assistant)),
        exec
          ? h(
              'div',
              { class: exec.ok ? 'q-muted' : 'q-error' },
              exec.ok
                ? `${exec.rowCount.toLocaleString()} row${exec.rowCount === 1 ? '' : 's'}` +
                    `${exec.columns.length ? ` · ${exec.columns.join(', ')}` : ''}${exec.truncated ? ' (cut)' : ''}`
                : `${exec.errorClass ?? 'error'}: ${exec.error ?? ''}`,
            )
          : null,
        t.action.problems.length ? h('div', { class: 'q-warn' }, t.action.problems.join('; ')) : null,
        ...t.observations.map((o) =>
          h(
            'details',
            { open: t.observations.length === 1 },
            h('summary', {}, `Observation (${o.role})`),
            h('pre', { class: 'l-obs' }, o.content),
          ),
        ),
      ),
    );
  });
  parts.push(
    h(
      'div',
      { class: 'q-card' },
      h('h3', {}, 'Final SQL'),
      r.finalSql ? highlightSql(r.finalSql) : h('div', { class: 'q-warn' }, `No final SQL (ended: ${r.end}).`),
    ),
  );
  trajectoryPane.replaceChildren(...parts);
}

function renderTags(): void {
  const names = new Set(allTags.map((t) => t.name));
  const extra = [...selectedTags].filter((t) => !names.has(t)).map((name) => ({ name, builtin: false }));
  tagRow.replaceChildren(
    ...[...allTags, ...extra].map((t, i) => {
      const b = h(
        'button',
        {
          class: 'l-chip',
          type: 'button',
          'aria-pressed': String(selectedTags.has(t.name)),
          'data-tag': t.name,
          tabindex: i === 0 ? 0 : -1,
          title: t.builtin ? 'built-in failure mode' : 'added by a reviewer',
        },
        t.name,
      );
      b.addEventListener('click', () => toggleTag(t.name));
      return b;
    }),
  );
}

function renderVerdict(v: Verdict | ''): void {
  for (const [name, b] of verdictButtons) b.setAttribute('aria-pressed', String(name === v));
}

function currentVerdict(): Verdict | '' {
  for (const [name, b] of verdictButtons) if (b.getAttribute('aria-pressed') === 'true') return name;
  return '';
}

function renderStatus(): void {
  const dirty = state.draft?.dirty ?? false;
  if (savePending) status.textContent = 'Saving…';
  else if (dirty) status.textContent = 'Unsaved changes (s saves; moving on saves too).';
  else if (label)
    status.textContent =
      `${lastSavedAt ? 'Saved' : 'Labeled'} ${label.verdict ?? 'without a verdict'} by ${label.labeler}, ` +
      `${new Date(label.updatedAt).toLocaleString()}.`;
  else status.textContent = 'Not labeled yet.';
  status.className = 'l-status q-muted';
}

/** Run `seq`'s result: the match verdict, then the whole result a page at a time (or the run's error). */
function renderRun(o: RunOutcome | null, error: string | null = null, seq: number | null = null): void {
  runGrid = null;
  if (error !== null) {
    runOut.replaceChildren(h('div', { class: 'q-error' }, error));
    return;
  }
  if (!o) {
    runOut.replaceChildren();
    return;
  }
  const ref = o.against === 'gold' ? 'the gold result' : o.against === 'final' ? 'the final SQL’s result' : '';
  const verdict =
    o.against === 'none'
      ? h('div', { class: 'q-muted' }, 'No gold and no final SQL to compare with.')
      : o.match === true
        ? h('div', { class: 'q-ok', id: 'l-match' }, `✓ Matches ${ref}.`)
        : o.match === false
          ? h(
              'div',
              { class: 'q-error', id: 'l-match' },
              `✗ Differs from ${ref}: ${o.reason ?? ''}${o.detail ? ` (${o.detail})` : ''}`,
            )
          : h('div', { class: 'q-warn', id: 'l-match' }, `Not compared: ${o.detail ?? o.reason ?? 'no reference'}`);
  const parts: Node[] = [verdict];
  if (o.error) parts.push(h('div', { class: 'q-error' }, o.error));
  else if (seq !== null && record) {
    const id = record.id;
    const grid = pagedGrid((message) => host.post({ type: 'grid', seq, id, message }), { id: 'l-grid' });
    runGrid = { seq, id, grid };
    parts.push(grid.element);
    grid.reload();
  }
  runOut.replaceChildren(...parts);
}

// ---------------------------------------------------------------------------------------------------------------
// Actions

function edited(): void {
  if (!record) return;
  editVersion++;
  state.draft = {
    id: record.id,
    verdict: currentVerdict(),
    correctedSql: sqlBox.value,
    tags: [...selectedTags].sort(),
    note: noteBox.value,
    dirty: true,
  };
  persist();
  renderStatus();
}

function setVerdict(v: Verdict): void {
  if (!record) return;
  renderVerdict(v);
  edited();
  save();
}

/** A verdict key: sets the verdict, saves it and goes to the next item (the last one just saves). */
function verdictAndNext(v: Verdict): void {
  if (!record) return;
  renderVerdict(v);
  edited();
  // go() saves the dirty draft before it moves, so the label is written once.
  if (queue && state.position < queue.size - 1) go(1);
  else save();
}

function toggleTag(name: string): void {
  if (selectedTags.has(name)) selectedTags.delete(name);
  else selectedTags.add(name);
  const focused = (document.activeElement as HTMLElement | null)?.dataset?.tag;
  renderTags();
  edited();
  if (focused) (tagRow.querySelector(`[data-tag="${CSS.escape(focused)}"]`) as HTMLElement | null)?.focus();
}

function addTag(): void {
  const name = newTag.value.trim().replace(/\s+/g, ' ').toLowerCase();
  if (!name) return;
  newTag.value = '';
  host.post({ type: 'addTag', name });
  selectedTags.add(name);
  renderTags();
  edited();
}

function save(): void {
  if (!record) return;
  const d = state.draft && state.draft.id === record.id ? state.draft : null;
  if (!d) {
    renderStatus();
    return;
  }
  const s = ++seq;
  savePending = { seq: s, version: editVersion };
  host.post({
    type: 'save',
    seq: s,
    id: record.id,
    verdict: currentVerdict(),
    correctedSql: sqlBox.value,
    tags: [...selectedTags].sort(),
    note: noteBox.value,
  });
  renderStatus();
}

function runSql(): void {
  if (!record) return;
  if (sqlBox.value.trim() === '') {
    renderRun(null, 'Write a corrected SQL first (e), or start from the final SQL.');
    return;
  }
  runPending = ++seq;
  runGrid = null;
  runOut.replaceChildren(h('div', { class: 'q-muted' }, 'Running…'));
  host.post({ type: 'run', seq: runPending, id: record.id, sql: sqlBox.value });
}

function go(delta: number): void {
  if (!queue || queue.size === 0) return;
  const to = Math.min(Math.max(0, state.position + delta), queue.size - 1);
  if (to === state.position) return;
  if (state.draft?.dirty && record && state.draft.id === record.id) save();
  host.post({ type: 'go', position: to });
}

function toggleHelp(show?: boolean): void {
  state.showHelp = show ?? help.hidden;
  help.hidden = !state.showHelp;
  persist();
}
help.hidden = !state.showHelp;

// ---------------------------------------------------------------------------------------------------------------
// Keyboard

function inField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t?.closest?.('input, textarea, select, vscode-text-field, vscode-text-area, vscode-dropdown');
}

document.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    if (e.target === sqlBox || !inField(e)) {
      e.preventDefault();
      runSql();
    }
    return;
  }
  if (e.key === 'Escape') {
    if (!help.hidden) {
      toggleHelp(false);
      e.preventDefault();
      return;
    }
    if (inField(e)) {
      (e.target as HTMLElement).blur();
      formPane.focus();
      e.preventDefault();
    }
    return;
  }
  if (inField(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  const chip = (e.target as HTMLElement | null)?.closest?.('.l-chip') as HTMLElement | null;
  if (chip && (e.key === 'ArrowRight' || e.key === 'ArrowLeft')) {
    const chips = Array.from(tagRow.querySelectorAll<HTMLElement>('.l-chip'));
    const i = chips.indexOf(chip) + (e.key === 'ArrowRight' ? 1 : -1);
    chips[(i + chips.length) % chips.length]?.focus();
    e.preventDefault();
    return;
  }
  if (chip && e.key === 'a') {
    newTag.focus();
    e.preventDefault();
    return;
  }
  const handled = (() => {
    switch (e.key) {
      case 'j':
      case 'n':
      case 'ArrowDown':
        go(1);
        return true;
      case 'k':
      case 'p':
      case 'ArrowUp':
        go(-1);
        return true;
      case '1':
        verdictAndNext('correct');
        return true;
      case '2':
        verdictAndNext('incorrect');
        return true;
      case '3':
        verdictAndNext('unsure');
        return true;
      case 'e':
        sqlBox.focus();
        return true;
      case 't':
        (tagRow.querySelector('.l-chip') as HTMLElement | null)?.focus();
        return true;
      case 's':
        save();
        return true;
      case '?':
        toggleHelp();
        return true;
      default:
        return false;
    }
  })();
  if (handled) e.preventDefault();
});
formPane.tabIndex = -1;

// ---------------------------------------------------------------------------------------------------------------
// Messages from the host

function showItem(position: number, r: TrajectoryRecord, l: Label | null, changed: boolean): void {
  const sameItem = record?.id === r.id;
  record = r;
  label = l;
  state.position = position;
  state.id = r.id;
  editVersion = 0;
  savePending = null;
  if (!sameItem) {
    lastSavedAt = null;
    runPending = null;
    renderRun(null);
  }
  // Unsaved edits of this trajectory (kept while the panel was hidden) win over the stored label.
  const d = state.draft && state.draft.id === r.id && state.draft.dirty ? state.draft : null;
  if (!d) state.draft = null;
  renderVerdict(d ? d.verdict : (l?.verdict ?? ''));
  sqlBox.value = d ? d.correctedSql : (l?.correctedSql ?? '');
  noteBox.value = d ? d.note : (l?.note ?? '');
  selectedTags = new Set(d ? d.tags : (l?.tags ?? []));
  setDisabled(useFinal, !r.finalSql);
  renderTrajectory(r, changed);
  renderTags();
  renderStatus();
  renderHead();
  formPane.hidden = false;
  persist();
  if (!sameItem) window.scrollTo(0, 0);
}

host.onMessage((m) => {
  switch (m.type) {
    case 'loading':
      say(`Reading ${m.file}…`);
      return;
    case 'queue':
      queue = m.queue;
      state.file = m.queue.file;
      state.filter = m.queue.filter;
      persist();
      say(m.queue.problems.length ? `Some lines could not be read: ${m.queue.problems.join(' · ')}` : '', 'warn');
      renderHead();
      return;
    case 'item':
      showItem(m.position, m.record, m.label, m.changed);
      return;
    case 'empty':
      record = null;
      formPane.hidden = true;
      trajectoryPane.replaceChildren(
        h('div', { class: 'q-card q-muted', id: 'l-empty' }, `Nothing to label: ${m.reason}.`),
      );
      if (queue) {
        queue.size = 0;
        renderHead();
      }
      return;
    case 'tags':
      allTags = m.tags;
      renderTags();
      return;
    case 'saved': {
      if (record?.id === m.id) {
        label = m.label;
        if (savePending?.seq === m.seq) {
          if (savePending.version === editVersion && state.draft) state.draft.dirty = false;
          savePending = null;
        }
        lastSavedAt = m.label.updatedAt;
        persist();
        renderStatus();
      }
      if (queue) {
        queue.labeled = m.labeled;
        renderHead();
      }
      return;
    }
    case 'saveFailed':
      if (savePending?.seq === m.seq) savePending = null;
      renderStatus();
      status.textContent = `Not saved: ${m.message}`;
      status.className = 'l-status q-error';
      return;
    case 'runResult':
      if (m.restored && record?.id === m.id && runPending === null) {
        // The newest run, sent again after this webview reloaded: later runs number after it.
        seq = Math.max(seq, m.seq);
        renderRun(m.outcome, null, m.seq);
      } else if (m.seq === runPending && record?.id === m.id) renderRun(m.outcome, null, m.seq);
      return;
    case 'grid':
      if (runGrid && runGrid.seq === m.seq && runGrid.id === m.id && record?.id === m.id)
        runGrid.grid.receive(m.message);
      return;
    case 'runFailed':
      if (m.seq === runPending && record?.id === m.id) renderRun(null, m.message);
      return;
    case 'error':
      say(m.message, 'error');
      return;
  }
});

host.post({ type: 'ready', position: state.position, id: state.id ?? undefined });
