// The label form, built once and refilled per trajectory (so focus and keyboard handling stay simple): the verdict
// buttons, the corrected SQL with Run and "Start from final SQL", the run's result, the failure-mode tag chips with
// a field to add one, the note, Save and the status line.
import { button, h } from '../shared/components';
import { VERDICTS } from '../../src/core/labels/types';
import type { Verdict } from '../../src/protocol/labeling';

export interface Form {
  readonly verdictButtons: ReadonlyMap<Verdict, HTMLElement>;
  readonly sqlBox: HTMLTextAreaElement;
  readonly useFinal: HTMLElement;
  readonly runOut: HTMLElement;
  readonly tagRow: HTMLElement;
  readonly newTag: HTMLInputElement;
  readonly noteBox: HTMLTextAreaElement;
  readonly status: HTMLElement;
}

interface FormHandlers {
  verdict(v: Verdict): void;
  edited(): void;
  run(): void;
  useFinal(): void;
  addTag(): void;
  save(): void;
}

export function buildForm(pane: HTMLElement, on: FormHandlers): Form {
  const verdictButtons = new Map<Verdict, HTMLElement>();
  const verdictRow = h('div', { class: 'l-verdicts', role: 'group', 'aria-label': 'Verdict' });
  VERDICTS.forEach((v, i) => {
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
    b.addEventListener('click', () => on.verdict(v));
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
  sqlBox.addEventListener('input', () => on.edited());
  const runBtn = button('Run', () => on.run(), {
    appearance: 'primary',
    title: 'Run the corrected SQL in the sandbox (Ctrl+Enter)',
    id: 'l-run',
  });
  const useFinal = button('Start from final SQL', () => on.useFinal(), { appearance: 'secondary', id: 'l-use-final' });
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
      on.addTag();
    }
  });
  const noteBox = h('textarea', {
    class: 'l-text',
    id: 'l-note',
    rows: 3,
    'aria-label': 'Note',
    placeholder: 'Note (optional)',
  });
  noteBox.addEventListener('input', () => on.edited());
  const saveBtn = button('Save', () => on.save(), { appearance: 'primary', title: 'Save the label (s)', id: 'l-save' });
  const status = h('div', { class: 'l-status q-muted', id: 'l-status', 'aria-live': 'polite' });

  pane.append(
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
      button('+ Add tag', () => on.addTag(), { appearance: 'secondary', id: 'l-add-tag' }),
    ),
    h('h3', {}, 'Note'),
    noteBox,
    h('div', { class: 'q-row' }, saveBtn),
    status,
  );
  pane.tabIndex = -1;
  return { verdictButtons, sqlBox, useFinal, runOut, tagRow, newTag, noteBox, status };
}
