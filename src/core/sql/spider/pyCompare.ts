// Python's == and sorted() over the structures the evaluator compares: tuples/lists element-wise, dicts key-wise,
// numbers by value (1 == 1.0). Ordering two different dicts raises TypeError in Python; so does sortTableUnits.
import { SpiderParseError } from './pyErrors';

export function pyEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => pyEqual(x, b[i]));
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every(
      (k) => Object.hasOwn(b, k) && pyEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    );
  }
  // Python's bool is an int: True == 1.
  if ((typeof a === 'boolean' || typeof a === 'number') && (typeof b === 'boolean' || typeof b === 'number'))
    return Number(a) === Number(b);
  return false;
}

/** `x in list` */
export function pyContains(list: readonly unknown[], x: unknown): boolean {
  return list.some((y) => pyEqual(x, y));
}

/** `list.remove(x)`: drops the first equal element. */
export function pyRemove(list: unknown[], x: unknown): void {
  const i = list.findIndex((y) => pyEqual(x, y));
  if (i >= 0) list.splice(i, 1);
}

/** Python's `<` on the [type, id-or-query] pairs of a FROM clause. */
function tableUnitLess(a: readonly [string, unknown], b: readonly [string, unknown]): boolean {
  if (a[0] !== b[0]) return a[0] < b[0];
  if (pyEqual(a[1], b[1])) return false;
  if (typeof a[1] === 'string' && typeof b[1] === 'string') return a[1] < b[1];
  throw new SpiderParseError('TypeError', "'<' not supported between instances of 'dict' and 'dict'");
}

/** sorted(table_units) */
export function sortTableUnits<T extends readonly [string, unknown]>(units: readonly T[]): T[] {
  return [...units].sort((a, b) => (tableUnitLess(a, b) ? -1 : tableUnitLess(b, a) ? 1 : 0));
}
