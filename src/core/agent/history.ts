// How an observation joins the conversation. Most are messages of their own (a user or tool message). An observation
// in the assistant role is text the environment writes into the model's own rollout (MTIR-SQL App. B line 20,
// "y ← y + ⟨My action is not correct. Let me rethink.⟩"): it is appended to the model's last turn, so the next
// generation continues that turn instead of answering a new message.
import type { ChatMessage } from '../models/types';
import type { Observation } from './types';

/** Appends `o` to `history`: joined to a trailing assistant message when `o` is in the assistant role. */
export function appendObservation(history: ChatMessage[], o: Observation): void {
  const last = history[history.length - 1];
  if (o.role === 'assistant' && last !== undefined && last.role === 'assistant') {
    history[history.length - 1] = { ...last, content: `${last.content}\n${o.content}` };
    return;
  }
  history.push({ role: o.role, content: o.content });
}
