// A forgiving JSON reader for tool calls written by models: strict JSON first, then a small recursive-descent parser
// that accepts what models commonly get wrong and names every liberty it took. It never evaluates anything and
// never throws.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

interface LenientResult {
  value: JsonValue | undefined;
  /** Each tolerance used, in words ("single-quoted string", "trailing comma", …); empty for strict JSON. */
  tolerated: string[];
  /** Why nothing could be read, when `value` is undefined. */
  error: string | null;
}

class Reader {
  pos = 0;
  readonly tolerated = new Set<string>();

  constructor(private readonly s: string) {}

  fail(what: string): never {
    throw new LenientJsonError(`${what} at character ${this.pos}`);
  }

  ws(): void {
    for (;;) {
      const c = this.s[this.pos];
      if (c === ' ' || c === '\n' || c === '\r' || c === '\t') {
        this.pos++;
        continue;
      }
      if (c === '/' && this.s[this.pos + 1] === '/') {
        this.tolerated.add('comment');
        while (this.pos < this.s.length && this.s[this.pos] !== '\n') this.pos++;
        continue;
      }
      if (c === '/' && this.s[this.pos + 1] === '*') {
        this.tolerated.add('comment');
        const end = this.s.indexOf('*/', this.pos + 2);
        this.pos = end < 0 ? this.s.length : end + 2;
        continue;
      }
      return;
    }
  }

  value(depth: number): JsonValue {
    if (depth > 64) this.fail('nesting too deep');
    this.ws();
    const c = this.s[this.pos];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"' || c === "'") return this.string();
    if (c === '-' || c === '+' || (c !== undefined && c >= '0' && c <= '9') || c === '.') return this.number();
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.pos, this.pos + 32))?.[0];
    if (word === 'true' || word === 'false' || word === 'null') {
      this.pos += word.length;
      return word === 'true' ? true : word === 'false' ? false : null;
    }
    if (word === 'True' || word === 'False' || word === 'None') {
      this.tolerated.add('Python literal');
      this.pos += word.length;
      return word === 'True' ? true : word === 'False' ? false : null;
    }
    if (c === undefined) this.fail('unexpected end of text');
    return this.fail(`unexpected ${JSON.stringify(c)}`);
  }

  object(depth: number): { [key: string]: JsonValue } {
    this.pos++;
    const out: { [key: string]: JsonValue } = {};
    for (;;) {
      this.ws();
      if (this.s[this.pos] === '}') {
        this.pos++;
        return out;
      }
      if (this.pos >= this.s.length) {
        this.tolerated.add('unclosed object');
        return out;
      }
      const key = this.key();
      this.ws();
      if (this.s[this.pos] === ':') this.pos++;
      else if (this.s[this.pos] === '=') {
        this.tolerated.add('= instead of :');
        this.pos++;
      } else this.fail('expected ":"');
      if (Object.hasOwn(out, key)) this.tolerated.add(`duplicate key "${key}" (last kept)`);
      out[key] = this.value(depth + 1);
      this.ws();
      const c = this.s[this.pos];
      if (c === ',') {
        this.pos++;
        this.ws();
        if (this.s[this.pos] === '}') this.tolerated.add('trailing comma');
        continue;
      }
      if (c === '}') {
        this.pos++;
        return out;
      }
      if (this.pos >= this.s.length) {
        this.tolerated.add('unclosed object');
        return out;
      }
      this.fail('expected "," or "}"');
    }
  }

  key(): string {
    const c = this.s[this.pos];
    if (c === '"' || c === "'") return this.string();
    const word = /^[A-Za-z_$][A-Za-z0-9_$-]*/.exec(this.s.slice(this.pos, this.pos + 200))?.[0];
    if (!word) this.fail('expected a key');
    this.tolerated.add('unquoted key');
    this.pos += word.length;
    return word;
  }

  array(depth: number): JsonValue[] {
    this.pos++;
    const out: JsonValue[] = [];
    for (;;) {
      this.ws();
      if (this.s[this.pos] === ']') {
        this.pos++;
        return out;
      }
      if (this.pos >= this.s.length) {
        this.tolerated.add('unclosed array');
        return out;
      }
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.pos];
      if (c === ',') {
        this.pos++;
        this.ws();
        if (this.s[this.pos] === ']') this.tolerated.add('trailing comma');
        continue;
      }
      if (c === ']') {
        this.pos++;
        return out;
      }
      if (this.pos >= this.s.length) {
        this.tolerated.add('unclosed array');
        return out;
      }
      this.fail('expected "," or "]"');
    }
  }

  string(): string {
    const quote = this.s[this.pos];
    if (quote === "'") this.tolerated.add('single-quoted string');
    this.pos++;
    let out = '';
    for (;;) {
      if (this.pos >= this.s.length) {
        this.tolerated.add('unclosed string');
        return out;
      }
      const c = this.s[this.pos++];
      if (c === quote) {
        // SQL inside a string often holds the same quote unescaped (name = 'x', "col"): a quote ends the string
        // only where JSON could go on.
        if (this.endsValue()) return out;
        this.tolerated.add(`unescaped ${quote} inside a string`);
        out += c;
        continue;
      }
      if (c === '\n' || c === '\r' || c === '\t') this.tolerated.add('raw control character in string');
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.s[this.pos++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case '/':
          out += '/';
          break;
        case '\\':
          out += '\\';
          break;
        case '"':
          out += '"';
          break;
        case "'":
          out += "'";
          if (quote === '"') this.tolerated.add("escaped ' in string");
          break;
        case 'u': {
          const hex = this.s.slice(this.pos, this.pos + 4);
          if (/^[0-9a-fA-F]{4}$/.test(hex)) {
            out += String.fromCharCode(parseInt(hex, 16));
            this.pos += 4;
          } else {
            this.tolerated.add('bad \\u escape');
            out += 'u';
          }
          break;
        }
        case undefined:
          this.tolerated.add('unclosed string');
          return out;
        default:
          this.tolerated.add('unknown escape');
          out += e;
      }
    }
  }

  private endsValue(): boolean {
    const m = /^\s*(.|$)/.exec(this.s.slice(this.pos, this.pos + 200));
    const next = m ? m[1] : '';
    return next === '' || next === ',' || next === '}' || next === ']' || next === ':';
  }

  number(): number {
    const m = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/.exec(this.s.slice(this.pos, this.pos + 64));
    if (!m) this.fail('bad number');
    if (m[0].startsWith('+') || m[0].startsWith('.') || /\.$|\.(?=[eE])/.test(m[0]))
      this.tolerated.add('non-JSON number');
    this.pos += m[0].length;
    return Number(m[0]);
  }
}

class LenientJsonError extends Error {}

/**
 * Reads the first JSON object or array in `text`. Strict JSON goes through JSON.parse untouched; otherwise the
 * lenient reader accepts single quotes, trailing commas, unquoted keys, Python True/False/None, comments, raw
 * newlines inside strings and unclosed brackets at the end, and reports each one. Text before or after the value is
 * reported too.
 */
export function parseLenientJson(text: string): LenientResult {
  const src = typeof text === 'string' ? text : '';
  const trimmed = src.trim();
  try {
    return { value: JSON.parse(trimmed) as JsonValue, tolerated: [], error: null };
  } catch {
    // fall through to the lenient reader
  }
  const start = trimmed.search(/[{[]/);
  if (start < 0)
    return { value: undefined, tolerated: [], error: trimmed === '' ? 'empty text' : 'no JSON object found' };
  const r = new Reader(trimmed);
  r.pos = start;
  try {
    const value = r.value(0);
    const tolerated = [...r.tolerated];
    if (start > 0) tolerated.unshift('text before the JSON');
    const rest = trimmed.slice(r.pos).trim();
    if (rest !== '') tolerated.push('text after the JSON');
    return { value, tolerated, error: null };
  } catch (err) {
    return {
      value: undefined,
      tolerated: [...r.tolerated],
      error: err instanceof LenientJsonError ? err.message : 'unreadable JSON',
    };
  }
}
