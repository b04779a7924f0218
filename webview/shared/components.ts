// The project's own component layer. Webview apps build UI only through these functions, never by naming
// `vscode-*` tags themselves: @vscode/webview-ui-toolkit is archived upstream, and swapping it (e.g. for
// @vscode-elements/elements) must mean changing this one file.
import {
  provideVSCodeDesignSystem,
  vsCodeBadge,
  vsCodeButton,
  vsCodeCheckbox,
  vsCodeDivider,
  vsCodeDropdown,
  vsCodeLink,
  vsCodeOption,
  vsCodePanels,
  vsCodePanelTab,
  vsCodePanelView,
  vsCodeProgressRing,
  vsCodeTag,
  vsCodeTextArea,
  vsCodeTextField,
} from '@vscode/webview-ui-toolkit';

let registered = false;
/** Registers the toolkit's custom elements once per page. */
export function registerComponents(): void {
  if (registered) return;
  registered = true;
  provideVSCodeDesignSystem().register(
    vsCodeBadge(),
    vsCodeButton(),
    vsCodeCheckbox(),
    vsCodeDivider(),
    vsCodeDropdown(),
    vsCodeLink(),
    vsCodeOption(),
    vsCodePanels(),
    vsCodePanelTab(),
    vsCodePanelView(),
    vsCodeProgressRing(),
    vsCodeTag(),
    vsCodeTextArea(),
    vsCodeTextField(),
  );
}

type Attrs = Record<string, string | number | boolean | undefined>;

/** Creates an element with attributes (false/undefined omitted), children and an optional class. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs,
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K];
export function h(tag: string, attrs?: Attrs, ...children: (Node | string | null | undefined)[]): HTMLElement;
export function h(tag: string, attrs: Attrs = {}, ...children: (Node | string | null | undefined)[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) el.append(c);
  return el;
}

interface ButtonOptions {
  appearance?: 'primary' | 'secondary' | 'icon';
  title?: string;
  disabled?: boolean;
  id?: string;
}
export function button(label: string, onClick: () => void, opts: ButtonOptions = {}): HTMLElement {
  const el = h(
    'vscode-button',
    { appearance: opts.appearance ?? 'primary', title: opts.title, disabled: opts.disabled, id: opts.id },
    label,
  );
  el.addEventListener('click', () => {
    if (!el.hasAttribute('disabled')) onClick();
  });
  return el;
}

export function setDisabled(el: HTMLElement, disabled: boolean): void {
  if (disabled) el.setAttribute('disabled', '');
  else el.removeAttribute('disabled');
}

interface TextFieldOptions {
  placeholder?: string;
  value?: string;
  id?: string;
  label?: string;
}
export function textField(opts: TextFieldOptions, onInput?: (value: string) => void): HTMLElement & { value: string } {
  const el = h(
    'vscode-text-field',
    { placeholder: opts.placeholder, id: opts.id, value: opts.value },
    opts.label ?? '',
  ) as HTMLElement & { value: string };
  if (onInput) el.addEventListener('input', () => onInput(el.value));
  return el;
}

export function textArea(
  opts: TextFieldOptions & { rows?: number },
  onInput?: (value: string) => void,
): HTMLElement & { value: string } {
  const el = h(
    'vscode-text-area',
    { placeholder: opts.placeholder, id: opts.id, rows: opts.rows ?? 3, resize: 'vertical' },
    opts.label ?? '',
  ) as HTMLElement & { value: string };
  if (opts.value !== undefined) el.value = opts.value;
  if (onInput) el.addEventListener('input', () => onInput(el.value));
  return el;
}

export function dropdown(
  options: { value: string; label: string }[],
  selected: string,
  onChange: (value: string) => void,
  id?: string,
): HTMLElement & { value: string } {
  const el = h(
    'vscode-dropdown',
    { id },
    ...options.map((o) => h('vscode-option', { value: o.value, selected: o.value === selected }, o.label)),
  ) as HTMLElement & { value: string };
  el.addEventListener('change', () => onChange(el.value));
  return el;
}

export const badge = (text: string | number): HTMLElement => h('vscode-badge', {}, String(text));
export const tag = (text: string): HTMLElement => h('vscode-tag', {}, text);
export const progressRing = (): HTMLElement => h('vscode-progress-ring');

/**
 * A plain HTML table themed with VS Code colours. Used for results instead of the toolkit's data grid, which
 * renders every cell as a custom element and gets slow past a few hundred rows.
 */
export function table(
  columns: string[],
  rows: unknown[][],
  opts: { caption?: string; className?: string } = {},
): HTMLTableElement {
  const t = h('table', { class: opts.className ?? 'q-table' });
  if (opts.caption) t.append(h('caption', {}, opts.caption));
  t.append(h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))));
  const body = h('tbody');
  for (const r of rows)
    body.append(h('tr', {}, ...r.map((v) => h('td', { class: v === null ? 'q-null' : undefined }, formatCell(v)))));
  t.append(body);
  return t;
}

function formatCell(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
