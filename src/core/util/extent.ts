// Smallest and largest of a list without spreading it into Math.min/Math.max: a spread passes every element as an
// argument, and past about 100,000 of them the call overflows the stack ("Maximum call stack size exceeded").

/** The largest of `values`, or `empty` when there are none. */
export function maxOf(values: Iterable<number>, empty = -Infinity): number {
  let best = -Infinity;
  let any = false;
  for (const v of values) {
    any = true;
    if (v > best) best = v;
  }
  return any ? best : empty;
}

/** The smallest of `values`, or `empty` when there are none. */
export function minOf(values: Iterable<number>, empty = Infinity): number {
  let best = Infinity;
  let any = false;
  for (const v of values) {
    any = true;
    if (v < best) best = v;
  }
  return any ? best : empty;
}

/** The longest string length among `texts`, at least `floor`. */
export function longest(texts: Iterable<string>, floor = 0): number {
  let n = floor;
  for (const t of texts) if (t.length > n) n = t.length;
  return n;
}
