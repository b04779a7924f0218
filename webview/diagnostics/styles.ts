// The diagnostics panel's own styles (the shared q-* classes are the components'): the chart grid, the ODT trees
// with their match colours, the term swatches, the virtualised trajectory list and the mismatch bars.
import { h } from '../shared/components';

const STYLE =
  `
.d-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 8px; }
.d-chart { position: relative; height: 220px; }
.d-chart.d-short { height: 90px; }
.d-chart.d-mid { height: 160px; }
.d-cols { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
.d-num { text-align: right; font-variant-numeric: tabular-nums; }
.d-swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; ` +
  `vertical-align: middle; }
.d-tree, .d-tree ul { list-style: none; padding-left: 14px; margin: 2px 0; }
.d-tree { padding-left: 0; }
.d-node { border-left: 3px solid var(--vscode-panel-border, #8884); padding: 2px 6px; margin: 4px 0; }
.d-node.d-match { border-left-color: var(--vscode-charts-green, #3a3); }
.d-node.d-mismatch { border-left-color: var(--vscode-charts-yellow, #cc0); }
.d-node.d-missing, .d-node.d-extra { border-left-color: var(--vscode-charts-red, #c33); }
.d-status { font-size: 0.85em; padding: 0 4px; border-radius: 3px; margin-left: 6px; border: 1px solid currentColor; }
.d-status.d-match { color: var(--vscode-charts-green, #3a3); }
.d-status.d-mismatch { color: var(--vscode-charts-yellow, #cc0); }
.d-status.d-missing, .d-status.d-extra { color: var(--vscode-charts-red, #c33); }
.d-diff { background: var(--vscode-diffEditor-removedTextBackground, #f003); ` +
  `outline: 1px solid var(--vscode-inputValidation-errorBorder, #c33); }
.d-low { color: var(--vscode-editorWarning-foreground); font-weight: 600; }
.d-tag { display: inline-block; font-size: 0.85em; margin: 1px 4px 1px 0; padding: 0 4px; border-radius: 3px;
  background: var(--vscode-inputValidation-warningBackground, #cc03); ` +
  `border: 1px solid var(--vscode-inputValidation-warningBorder, #cc0); }
.d-field { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); }
.d-field code { margin-right: 6px; }
.d-list { position: relative; overflow-y: auto; border: 1px solid var(--vscode-panel-border, #8884); }
.d-list:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
.d-window { position: absolute; top: 0; left: 0; right: 0; }
.d-lrow { display: grid; grid-template-columns: 9em minmax(8em, 1fr) 5em 9em 4em 6em 6em 4em; gap: 6px; ` +
  `align-items: center;
  height: 24px; padding: 0 6px; white-space: nowrap; font-size: var(--vscode-editor-font-size); }
.d-lrow > span { overflow: hidden; text-overflow: ellipsis; }
.d-lrow.d-row { position: absolute; left: 0; right: 0; box-sizing: border-box; }
.d-lhead { font-weight: 600; background: var(--vscode-editorWidget-background); }
.d-row:hover { background: var(--vscode-list-hoverBackground); cursor: pointer; }
.d-row.q-selected:hover { background: var(--vscode-list-activeSelectionBackground); }
.d-link { color: var(--vscode-textLink-foreground); }
.d-items { display: flex; flex-wrap: wrap; gap: 2px 10px; margin: 2px 0 6px 12px; }
.d-help { columns: 2; }
.d-bar { display: inline-block; height: 10px; min-width: 1px; vertical-align: middle; border-radius: 2px;
  background: var(--vscode-charts-orange, #d83); }
#filter { width: min(520px, 100%); }
h2 { font-size: 1.1em; margin: 8px 0 4px; }
h3 { font-size: 1em; margin: 6px 0 2px; }
`;

export function installStyles(): void {
  document.head.append(h('style', {}, STYLE));
}
