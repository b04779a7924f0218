// Chat messages in the shape VS Code's language-model API accepts. Pure, so it is unit-tested without VS Code.
// vscode.lm has only user and assistant roles: the system prompt is folded into the first user message, tool
// messages (the environment's observations) become user messages, and neighbours with the same role are merged so
// providers that insist on alternating turns accept the conversation.
import type { ChatMessage } from '../../core/models/types';

interface LmTurn {
  role: 'user' | 'assistant';
  content: string;
}

export function foldForLanguageModel(messages: readonly ChatMessage[]): LmTurn[] {
  const system = messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .filter((c) => c !== '');
  const out: LmTurn[] = [];
  for (const m of messages) {
    if (m.role === 'system') continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = out[out.length - 1];
    if (last && last.role === role) last.content += `\n\n${m.content}`;
    else out.push({ role, content: m.content });
  }
  if (system.length > 0) {
    const preamble = system.join('\n\n');
    if (out.length > 0 && out[0].role === 'user') out[0].content = `${preamble}\n\n${out[0].content}`;
    else out.unshift({ role: 'user', content: preamble });
  }
  return out;
}
