// How the diagnostics panel writes numbers: a share as a percentage with one decimal, a value rounded to a few
// decimals, and an en dash for a value that is missing. Without the DOM, so the host-side unit tests import it.

/** 0.1234 → "12.3%"; null → "–". */
export const pct = (x: number | null): string => (x === null ? '–' : `${(100 * x).toFixed(1)}%`);

/** The value rounded to `d` decimals (trailing zeros dropped); null or undefined → "–". */
export const num = (x: number | null | undefined, d = 3): string =>
  x === null || x === undefined ? '–' : String(Math.round(x * 10 ** d) / 10 ** d);
