// Draws the whole page from the state: header, help, status, then the run, the trajectory, or the invitation to
// open a file. The charts of the previous drawing are destroyed first.
import { h } from '../shared/components';
import { destroyCharts } from './charts';
import type { DiagnosticsContext } from './context';
import { renderHeader, renderHelp, renderStatus } from './header';
import { renderRun } from './runView';
import { renderTrajectory } from './trajectoryView';

export function renderPage(ctx: DiagnosticsContext): void {
  const state = ctx.app.saved;
  // A run drawn again while the user types in its filter (a rescore landing, the panel settling on the file's own
  // protocol) keeps the focus in the new filter box: state.filter already holds what was typed, and no key is lost.
  const typing = document.activeElement?.id === 'filter';
  destroyCharts();
  renderHeader(ctx);
  renderHelp(ctx);
  renderStatus(ctx);
  if (state.view === 'run' && state.run) renderRun(ctx, state.run);
  else if (state.view === 'trajectory' && state.trajectory) renderTrajectory(ctx, state.trajectory);
  else
    ctx.ui.content.replaceChildren(
      h('p', { class: 'q-muted' }, 'Open a trajectory file to see its rewards (Open file…, or o).'),
    );
  if (typing) (document.getElementById('filter') as HTMLElement | null)?.focus();
}
