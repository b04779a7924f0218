// The official parser signals a query it cannot read by raising (IndexError, KeyError, AssertionError, ValueError);
// the scorer catches any of them. One error class stands for all, with the Python error kind kept for messages.
export class SpiderParseError extends Error {
  constructor(
    readonly pyKind: 'IndexError' | 'KeyError' | 'AssertionError' | 'ValueError' | 'TypeError',
    message: string,
  ) {
    super(`${pyKind}: ${message}`);
    this.name = 'SpiderParseError';
  }
}

export function pyAssert(cond: boolean, message = 'assertion failed'): asserts cond {
  if (!cond) throw new SpiderParseError('AssertionError', message);
}

/** `list[i]` with Python's bounds: negative indexes count from the end, out of range raises. */
export function pyIndex<T>(list: readonly T[], i: number): T {
  const j = i < 0 ? list.length + i : i;
  if (j < 0 || j >= list.length) throw new SpiderParseError('IndexError', `list index ${i} out of range`);
  return list[j] as T;
}

/** `dict[key]`: a missing key raises. */
export function pyGet<V>(map: ReadonlyMap<string, V>, key: string): V {
  if (!map.has(key)) throw new SpiderParseError('KeyError', JSON.stringify(key));
  return map.get(key) as V;
}

const FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const SPECIAL_FLOAT = /^[+-]?(?:inf|infinity|nan)$/i;

/** Python's `float(s)` for a token (tokens hold no whitespace); null where Python raises ValueError. */
export function pyFloat(s: string): number | null {
  if (FLOAT.test(s)) return Number(s.replace(/_/g, ''));
  if (SPECIAL_FLOAT.test(s)) {
    const neg = s.startsWith('-');
    return /nan/i.test(s) ? NaN : neg ? -Infinity : Infinity;
  }
  return null;
}

const INT = /^[+-]?\d(?:_?\d)*$/;

/** Python's `int(s)` for a token; raises ValueError as Python does. */
export function pyInt(s: string): number {
  if (!INT.test(s)) throw new SpiderParseError('ValueError', `invalid literal for int(): ${JSON.stringify(s)}`);
  return Number(s.replace(/_/g, ''));
}
