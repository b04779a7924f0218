// Which agent-mode session a tool call belongs to, so its trajectory steps share a group. VS Code hands a tool the
// chat request's opaque invocation token (the same content for every call of one chat session); calls without one
// (invoked from a command or another extension) share one session per caller. A session also ends after a pause of
// SESSION_IDLE_MS, so a chat left open overnight starts a new one the next day.
import { createHash, randomUUID } from 'node:crypto';

const SESSION_IDLE_MS = 30 * 60_000;

/** A stable key for a token: its JSON text hashed (the token is a plain object), or 'direct' without one. */
export function tokenKey(token: unknown): string {
  if (token === undefined || token === null) return 'direct';
  let text: string;
  try {
    text = JSON.stringify(token) ?? String(token);
  } catch {
    text = String(token);
  }
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

export class ToolSessions {
  private readonly open = new Map<string, { id: string; steps: number; lastAt: number }>();

  constructor(private readonly idleMs = SESSION_IDLE_MS) {}

  /** The session id for a call with this token at `now`, and the call's step index in it. */
  next(token: unknown, now = Date.now()): { session: string; step: number } {
    const key = tokenKey(token);
    let s = this.open.get(key);
    if (!s || now - s.lastAt > this.idleMs) {
      s = { id: `lm-session-${randomUUID()}`, steps: 0, lastAt: now };
      this.open.set(key, s);
    }
    s.lastAt = now;
    return { session: s.id, step: s.steps++ };
  }
}
