// The labeling panel's app: one trajectory at a time from the host's review queue — question, database, turns (SQL
// highlighted, observations), final SQL — and the label form: verdict, corrected SQL with Run (the match, then the
// whole result in a paged grid the host pages, sorts and filters in SQLite), failure-mode tags, note. Keyboard first
// (see SHORTCUTS): j/k or n/p move, 1/2/3 set the verdict, save, move on, e edits the corrected SQL, Ctrl+Enter runs
// it, t goes to the tags, s saves, ? shows the shortcuts. Unsaved edits and the position survive the panel being
// hidden (host.saveState). This file only wires the views together; the state lives in one object (session.ts).
import { connectHost } from '../shared/host';
import { registerComponents } from '../shared/components';
import type { LabelAppState, ToApp, ToHost } from '../../src/protocol/labeling';
import { createActions } from './actions';
import type { LabelContext } from './context';
import { buildForm } from './form';
import { bindKeys } from './keyboard';
import { buildLayout } from './layout';
import { handleMessage } from './messages';
import { createRunResult } from './runResult';
import { initialSession } from './session';
import { installStyles } from './styles';

registerComponents();
const host = connectHost<ToHost, ToApp, LabelAppState>();
const session = initialSession(host.state());
installStyles();
const ui = buildLayout(document.getElementById('app')!, {
  setFilter: (filter) => host.post({ type: 'setFilter', filter }),
  go: (delta) => actions.go(delta),
  exportSft: () => host.post({ type: 'exportSft' }),
  exportRl: () => host.post({ type: 'exportRl' }),
  help: () => actions.toggleHelp(),
});
const form = buildForm(ui.formPane, {
  verdict: (v) => actions.setVerdict(v),
  edited: () => actions.edited(),
  run: () => actions.runSql(),
  useFinal: () => actions.useFinal(),
  addTag: () => actions.addTag(),
  save: () => actions.save(),
});
const ctx: LabelContext = { host, session, ui, form };
const run = createRunResult(ctx);
const actions = createActions(ctx, run);
ui.help.hidden = !session.saved.showHelp;
bindKeys(ctx, actions);
host.onMessage((m) => handleMessage(ctx, { actions, run }, m));

host.post({ type: 'ready', position: session.saved.position, id: session.saved.id ?? undefined });
