// The colours and font every Quarry chart (chart.js, in any panel) is drawn with: VS Code's --vscode-charts-* theme
// variables read when a chart is drawn, with neutral fallbacks, so a theme change only needs a redraw.

interface Theme {
  foreground: string;
  muted: string;
  grid: string;
  font: string;
  positive: string;
  negative: string;
  /** Distinct series colours (VS Code's chart palette). */
  palette: string[];
}

function cssVar(name: string, fallback: string): string {
  const v = getComputedStyle(document.body).getPropertyValue(name).trim();
  return v === '' ? fallback : v;
}

/** The current theme's chart colours (VS Code's --vscode-charts-* variables, with neutral fallbacks). */
export function theme(): Theme {
  const blue = cssVar('--vscode-charts-blue', '#3794ff');
  const red = cssVar('--vscode-charts-red', '#f14c4c');
  const green = cssVar('--vscode-charts-green', '#89d185');
  const yellow = cssVar('--vscode-charts-yellow', '#cca700');
  const orange = cssVar('--vscode-charts-orange', '#d18616');
  const purple = cssVar('--vscode-charts-purple', '#b180d7');
  return {
    foreground: cssVar('--vscode-charts-foreground', cssVar('--vscode-foreground', '#cccccc')),
    muted: cssVar('--vscode-descriptionForeground', '#999999'),
    grid: cssVar('--vscode-charts-lines', '#80808059'),
    font: cssVar('--vscode-font-family', 'sans-serif'),
    positive: green,
    negative: red,
    palette: [blue, orange, purple, green, yellow, red],
  };
}
