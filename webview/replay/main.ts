// The replay panel's app: a filter bar, a virtualised list of trajectory summaries (fixed row height, only the visible
// rows in the DOM), and a side pane with one trajectory turn by turn, two side by side, or a GRPO group in columns.
// Keyboard first: j/k ↑/↓ move in the list, n/p ←/→ step turns, Enter opens, x marks, c compares, g groups, ? helps.
// This file only wires the views together; the state lives in one object (state.ts) handed to each of them.
import { connectHost } from '../shared/host';
import { registerComponents } from '../shared/components';
import type { ReplayAppState, ToApp, ToHost } from '../../src/protocol/replay';
import type { ReplayContext } from './context';
import { createFilterBar } from './filters';
import { bindKeys, createHelp } from './keyboard';
import { buildLayout } from './layout';
import { createList } from './list';
import { handleMessage } from './messages';
import { createSidePane } from './side';
import { initialState } from './state';
import { renderCounts } from './status';
import { installStyles } from './styles';

registerComponents();
const host = connectHost<ToHost, ToApp, ReplayAppState>();
const state = initialState(host.state());
installStyles();
const ui = buildLayout(document.getElementById('app')!, {
  score: () => host.post(state.scoring.running ? { type: 'stopScoring' } : { type: 'score' }),
  compare: () => side.openCompare(),
  group: () => side.openGroup(),
  open: () => host.post({ type: 'pickSource' }),
  help: () => help.toggle(),
});
const ctx: ReplayContext = { host, state, ui };
const help = createHelp(ctx);
const filters = createFilterBar(ctx);
const list = createList(ctx);
const side = createSidePane(ctx, list);
bindKeys(ctx, { list, side, help });
host.onMessage((m) => handleMessage(ctx, { filters, list, side }, m));

filters.render();
renderCounts(ctx);
side.render();
ui.viewport.focus();
host.post({ type: 'ready' });
