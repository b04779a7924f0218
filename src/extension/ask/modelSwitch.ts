// Which model a conversation is with, and whether the next question may follow up on it: a question asked after the
// user switched models starts a new conversation (the earlier one is kept), so a follow-up never silently carries
// one model's answers into another's. Models are told apart by the label the settings give them ("openai · qwen").
import type { ExchangeView } from '../../protocol/ask';

/** The model of the conversation's last question, or null for an empty conversation (or one from before labels). */
function conversationModel(exchanges: readonly Pick<ExchangeView, 'model'>[]): string | null {
  return exchanges.at(-1)?.model ?? null;
}

/** The model the conversation was with when `current` is another one; null when the next question may follow up. */
export function modelSwitchedFrom(exchanges: readonly Pick<ExchangeView, 'model'>[], current: string): string | null {
  const was = conversationModel(exchanges);
  return was !== null && was !== current ? was : null;
}

/** A label for a model spec, for trajectories saved without one ("openai:http://h/v1#qwen" → "openai · qwen"). */
export function labelOfSpec(spec: string): string {
  const colon = spec.indexOf(':');
  if (colon < 0) return spec;
  const backend = spec.slice(0, colon);
  const rest = spec.slice(colon + 1);
  const hash = rest.lastIndexOf('#');
  const name = hash >= 0 ? rest.slice(hash + 1) : (rest.split(/[\\/]/).filter(Boolean).pop() ?? rest);
  return `${backend} · ${name}`;
}
