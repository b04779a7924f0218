// What a question's card says about its episode, without the DOM: the model that answered, the turns it used (those
// that finished, as the trajectory, the log and Replay count them) and, for a stopped question, what became of its
// turns, so the card never says both "save the trajectory to keep them" and "Trajectory saved".
import type { ExchangeView } from '../../src/protocol/ask';
import { turnsUsed } from '../../src/protocol/askState';

/** The status line's text before the progress ring: protocol, model, turns used of the budget. */
export function statusText(x: ExchangeView): string {
  const model = x.model ? ` · ${x.model}` : '';
  return `${x.protocol}${model} · turns ${turnsUsed(x)} / ${x.budget} ·`;
}

/** The note under a stopped question's turns. */
export function stoppedNote(x: Pick<ExchangeView, 'savedTo'>): string {
  const kept = x.savedTo
    ? 'The turns that finished are in its saved trajectory.'
    : 'The turns so far are kept here; save the trajectory to keep them.';
  return `Stopped. ${kept}`;
}
