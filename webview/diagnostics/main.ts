// The reward diagnostics panel. The host scores (core reward engine) and sends plain data; this app draws it: a run
// (histograms, EX by hardness, term contributions, integrity flags linking to their items, group statistics,
// Progress-SQL's Table 8 ODT mismatch rates, the trajectory list) or one trajectory (stacked term bar with
// explanations, ODT trees side by side, clause F1, verification verdicts). Charts are chart.js (charts.ts); the trees
// and tables are plain DOM. This file only wires the views together; the state lives in one object (state.ts).
import { connectHost } from '../shared/host';
import { registerComponents } from '../shared/components';
import type { DiagnosticsState, ToApp, ToHost } from '../../src/protocol/diagnostics';
import { theme } from './charts';
import { type DiagnosticsContext, persister } from './context';
import { renderHeader, renderStatus } from './header';
import { bindKeys } from './keyboard';
import { buildLayout } from './layout';
import { renderPage } from './page';
import { applyMessage, initialApp } from './state';
import { installStyles } from './styles';

registerComponents();
const host = connectHost<ToHost, ToApp, DiagnosticsState>();
const app = initialApp(host.state());
installStyles();
const ctx: DiagnosticsContext = {
  host,
  app,
  ui: buildLayout(document.getElementById('app')!),
  render: () => renderPage(ctx),
  ...persister(() => host.saveState(app.saved)),
};

host.onMessage((m) => {
  const redraw = applyMessage(app, m);
  if (redraw === 'status') {
    renderStatus(ctx);
    return;
  }
  ctx.persist();
  if (redraw === 'header') renderHeader(ctx);
  else {
    ctx.render();
    window.scrollTo(0, 0);
  }
});
bindKeys(ctx);

// VS Code switches the body's theme class when the colour theme changes: redraw so charts pick up the new colours.
// Only then (the class or the chart colours differ): VS Code also removes and re-adds the same classes when it
// reapplies its styles, and a full redraw there would replace the list under the reviewer's focus.
const themeSignature = () => `${document.body.className} ${JSON.stringify(theme())}`;
let drawnTheme = themeSignature();
new MutationObserver(() => {
  const now = themeSignature();
  if (now === drawnTheme) return;
  drawnTheme = now;
  ctx.render();
}).observe(document.body, { attributes: true, attributeFilter: ['class'] });

ctx.render();
host.post({ type: 'ready' });
