// What every view of the labeling app is handed: the channel to the host, the session state, the page's skeleton
// and the form. Views take it as an argument instead of reaching for module-level variables.
import type { Host } from '../shared/host';
import type { LabelAppState, ToApp, ToHost } from '../../src/protocol/labeling';
import type { Form } from './form';
import type { Layout } from './layout';
import type { LabelSession } from './session';

export interface LabelContext {
  readonly host: Host<ToHost, ToApp, LabelAppState>;
  readonly session: LabelSession;
  readonly ui: Layout;
  readonly form: Form;
}

/** Saves what survives hide/show: the position, the unsaved draft, the help. */
export function persist(ctx: LabelContext): void {
  ctx.host.saveState(ctx.session.saved);
}

/** What the form's text fields hold. */
export function formText(ctx: LabelContext): { correctedSql: string; note: string } {
  return { correctedSql: ctx.form.sqlBox.value, note: ctx.form.noteBox.value };
}
