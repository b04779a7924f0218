// Every message a webview sends is checked before the host acts on it: a webview is a web page, and a message is
// data from it, not a call the type system vouches for.

/** A field rule: the type a property must have; `?` suffix makes it optional. */
type FieldRule =
  | 'string'
  | 'number'
  | 'boolean'
  | 'object'
  | 'array'
  | 'string?'
  | 'number?'
  | 'boolean?'
  | 'object?'
  | 'array?';

/** For each message type, the fields it must carry (besides `type`). */
export type MessageRules<T extends { type: string }> = { [K in T['type']]: Record<string, FieldRule> };

type Checked<T> = { ok: true; message: T } | { ok: false; error: string };

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
  if (!fields || !Object.hasOwn(rules, msg.type))
    return { ok: false, error: `unknown message type ${JSON.stringify(msg.type)}` };
  const problem = fieldProblem(msg, fields, msg.type);
  return problem === null ? { ok: true, message: raw as T } : { ok: false, error: problem };
}

/**
 * The first field of `obj` that breaks its rule, in words prefixed with `what`, or null. With `nullIsAbsent` an
 * optional field may also be null (a saved webview state writes "nothing" as null; a message leaves it out).
 */
export function fieldProblem(
  obj: Record<string, unknown>,
  fields: Record<string, FieldRule>,
  what: string,
  nullIsAbsent = false,
): string | null {
  for (const [name, rule] of Object.entries(fields)) {
    const optional = rule.endsWith('?');
    const want = optional ? rule.slice(0, -1) : rule;
    const v = obj[name];
    if (v === undefined || (v === null && nullIsAbsent && optional)) {
      if (optional) continue;
      return `${what}: missing ${name}`;
    }
    const got = kindOf(v);
    if (got !== want || (want === 'number' && !Number.isFinite(v))) {
      return `${what}: ${name} should be ${want}, is ${got}`;
    }
  }
  return null;
}

/** A plain object (not null, not an array), or null. */
export function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
