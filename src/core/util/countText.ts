// The one way Quarry writes a count for people: thousands grouped the same everywhere (the result grid's
// "rows 1–200 of 50,000", Query History's "50,000 rows", export progress), whatever the machine's locale.

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** 50000 → "50,000". */
export function formatCount(n: number): string {
  return GROUPED.format(n);
}

/** 50000 → "50,000 rows", 1 → "1 row", null → "? rows" (not counted). */
export function rowsText(n: number | null): string {
  if (n === null) return '? rows';
  return `${formatCount(n)} ${n === 1 ? 'row' : 'rows'}`;
}
