// The replay panel's styles (theme variables only), and the row height the CSS and the virtual list agree on.
import { h } from '../shared/components';

/** Height of one list row, px: the list places row i at i * ROW_H. */
export const ROW_H = 24;

const CSS = `
#app { display: flex; flex-direction: column; height: 100vh; box-sizing: border-box; }
body { padding: 0 8px; overflow: hidden; }
.r-head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; padding: 6px 0; }
.r-head h1 { font-size: 1.1em; margin: 0 8px 0 0; font-weight: 600; }
.r-filters { display: flex; gap: 6px; align-items: flex-end; flex-wrap: wrap; padding-bottom: 6px;
  border-bottom: 1px solid var(--vscode-panel-border, #8884); }
.r-filters label.r-f { display: flex; flex-direction: column; font-size: 0.85em; gap: 2px;
  color: var(--vscode-descriptionForeground); }
.r-filters .r-num { width: 72px; --input-min-width: 56px; }
.r-filters .r-num::part(root) { min-width: 0; }
.r-filters .r-search { width: 220px; --input-min-width: 120px; }
.r-main { display: flex; flex: 1; min-height: 0; gap: 8px; padding-top: 6px; }
.r-listbox { display: flex; flex-direction: column; flex: 0 0 46%; min-width: 320px;
  border: 1px solid var(--vscode-panel-border, #8884);
  overflow: hidden; container-type: inline-size; }
/* Compare and group views need the width: the list gives up part of its share (it keeps its priority columns). */
.r-main.r-columns .r-listbox { flex-basis: 30%; min-width: 260px; }
/* A narrow panel stacks the list above the detail instead of squeezing both. */
@media (max-width: 1000px) { .r-main { flex-direction: column; } .r-listbox { flex: 0 0 38%; min-width: 0; } }
.r-listbox:focus-within { border-color: var(--vscode-focusBorder); }
.r-viewport { flex: 1; overflow-y: auto; position: relative; outline: none; }
.r-spacer { position: relative; }
.r-row, .r-colhead { display: grid; gap: 4px; align-items: center; height: ${ROW_H}px; padding: 0 4px;
  box-sizing: border-box; white-space: nowrap;
  grid-template-columns: 12px 14px 44px minmax(80px, 1fr) 40px 56px; }
/* Columns by priority as the list gets wider: verdict, line, question, turns, reward always; then protocol and label;
   then model and db. */
.r-row .c-wide, .r-colhead .c-wide, .r-row .c-wider, .r-colhead .c-wider { display: none; }
@container (min-width: 480px) {
  .r-row, .r-colhead { grid-template-columns: 12px 14px 44px minmax(80px, 1fr) 60px 40px 56px 90px; }
  .r-row .c-wide, .r-colhead .c-wide { display: block; }
}
@container (min-width: 720px) {
  .r-row, .r-colhead { grid-template-columns: 12px 14px 44px minmax(100px, 1fr) 60px 110px 100px 40px 56px 100px; }
  .r-row .c-wider, .r-colhead .c-wider { display: block; }
}
.r-row { position: absolute; left: 0; right: 0; cursor: pointer; }
.r-row > span, .r-colhead > span { overflow: hidden; text-overflow: ellipsis; }
.r-row:hover { background: var(--vscode-list-hoverBackground); }
.r-row.r-cursor { background: var(--vscode-list-activeSelectionBackground);
  color: var(--vscode-list-activeSelectionForeground); }
.r-row.r-marked .r-mark::before { content: '◆'; color: var(--vscode-focusBorder); }
.r-colhead { font-weight: 600; color: var(--vscode-descriptionForeground);
  border-bottom: 1px solid var(--vscode-panel-border, #8884); }
.r-num-cell { text-align: right; font-variant-numeric: tabular-nums; }
.r-row .c-label, .r-colhead .c-label { padding-left: 8px; }
.r-side { flex: 1; overflow: auto; min-width: 0; }
.r-turn { border-left: 3px solid transparent; }
.r-turn.r-current { border-left-color: var(--vscode-focusBorder); }
.r-meta { display: flex; gap: 10px; flex-wrap: wrap; color: var(--vscode-descriptionForeground); font-size: 0.9em; }
.r-terms { border-collapse: collapse; width: 100%; }
.r-terms td, .r-terms th { border-bottom: 1px solid var(--vscode-panel-border, #8884); padding: 2px 6px;
  text-align: left; vertical-align: top; }
.r-bar { display: inline-block; height: 8px; background: var(--vscode-charts-blue, #4e79a7); vertical-align: middle; }
.r-bar.r-neg { background: var(--vscode-charts-red, #e15759); }
.r-del { background: var(--vscode-diffEditor-removedTextBackground, #ff000033); text-decoration: line-through; }
.r-add { background: var(--vscode-diffEditor-insertedTextBackground, #00ff0033); }
.r-cols { display: grid; gap: 8px; align-items: start; }
.r-cell { border: 1px solid var(--vscode-panel-border, #8884); border-radius: 3px; padding: 4px 6px; min-width: 0; }
.r-cell pre { max-height: 220px; overflow: auto; }
.r-rowhead { font-weight: 600; color: var(--vscode-descriptionForeground); grid-column: 1 / -1; margin-top: 6px; }
.r-help { position: fixed; inset: 40px 20% auto 20%; background: var(--vscode-editorWidget-background);
  border: 1px solid var(--vscode-widget-border, var(--vscode-focusBorder));
  padding: 8px 16px; box-shadow: 0 2px 8px var(--vscode-widget-shadow, #0008); z-index: 10; }
.r-help table td { padding: 2px 10px 2px 0; }
kbd { font-family: var(--vscode-editor-font-family); border: 1px solid var(--vscode-panel-border, #8884);
  border-radius: 3px; padding: 0 4px; }
.r-notice { padding: 4px 0; }
.r-empty { padding: 16px; color: var(--vscode-descriptionForeground); }
`;

export function installStyles(): void {
  document.head.append(h('style', {}, CSS));
}
