// The labeling panel's own styles (the shared q-* classes are the components'): the sticky toolbar, the two-column
// layout, the verdict buttons and tag chips, the form's text fields, the shortcuts' box and the run's grid.
import { h } from '../shared/components';

const STYLE =
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
`;

export function installStyles(): void {
  document.head.append(h('style', {}, STYLE));
}
