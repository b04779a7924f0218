// Every message a webview sends is checked before the host acts on it: a webview is a web page, and a message is
// data from it, not a call the type system vouches for.

/** A field rule: the type a property must have; `?` suffix makes it optional. */
export type FieldRule = 'string' | 'number' | 'boolean' | 'object' | 'array' | 'string?' | 'number?' | 'boolean?' | 'object?' | 'array?';

/** For each message type, the fields it must carry (besides `type`). */
export type MessageRules<T extends { type: string }> = { [K in T['type']]: Record<string, FieldRule> };

export type Checked<T> = { ok: true; message: T } | { ok: false; error: string };

function kindOf(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v;
}

export function checkMessage<T extends { type: string }>(raw: unknown, rules: MessageRules<T>): Checked<T> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, error: 'message is not an object' };
  const msg = raw as Record<string, unknown>;
  if (typeof msg.type !== 'string') return { ok: false, error: 'message has no string type' };
  const fields = (rules as Record<string, Record<string, FieldRule>>)[msg.type];
  if (!fields || !Object.prototype.hasOwnProperty.call(rules, msg.type)) return { ok: false, error: `unknown message type ${JSON.stringify(msg.type)}` };
  for (const [name, rule] of Object.entries(fields)) {
    const optional = rule.endsWith('?');
    const want = optional ? rule.slice(0, -1) : rule;
    const v = msg[name];
    if (v === undefined) {
      if (optional) continue;
      return { ok: false, error: `${msg.type}: missing ${name}` };
    }
    const got = kindOf(v);
    if (got !== want || (want === 'number' && !Number.isFinite(v))) return { ok: false, error: `${msg.type}: ${name} should be ${want}, is ${got}` };
  }
  return { ok: true, message: raw as T };
}
