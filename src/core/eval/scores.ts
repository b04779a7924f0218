// Totals per hardness level and the table the official Spider evaluation.py prints (`print_scores`).
export const HARDNESS_LEVELS = ['easy', 'medium', 'hard', 'extra'] as const;
export type Hardness = (typeof HARDNESS_LEVELS)[number];

interface ScoredItem {
  /** undefined when it could not be determined (the item then counts only under "all"). */
  hardness: Hardness | undefined;
  exec?: boolean;
  match?: boolean;
}

interface LevelScore {
  count: number;
  exec?: number;
  match?: number;
}
export type ScoreTable = Record<Hardness | 'all', LevelScore>;

export function scoreByHardness(items: ScoredItem[], opts: { exec: boolean; match: boolean }): ScoreTable {
  const levels = [...HARDNESS_LEVELS, 'all'] as const;
  const sums = Object.fromEntries(levels.map((l) => [l, { count: 0, exec: 0, match: 0 }])) as Record<
    (typeof levels)[number],
    { count: number; exec: number; match: number }
  >;
  for (const it of items) {
    for (const l of it.hardness ? [it.hardness, 'all' as const] : ['all' as const]) {
      sums[l].count++;
      if (it.exec) sums[l].exec++;
      if (it.match) sums[l].match++;
    }
  }
  const table = {} as ScoreTable;
  for (const l of levels) {
    const s = sums[l];
    // As the official script: a level with no items shows 0.
    const rate = (n: number) => (s.count === 0 ? 0 : n / s.count);
    table[l] = { count: s.count };
    if (opts.exec) table[l].exec = rate(s.exec);
    if (opts.match) table[l].match = rate(s.match);
  }
  return table;
}

/**
 * Python's '{:.3f}': like toFixed(3) except on exact ties, which Python rounds half to even. Exact ties at the
 * fourth decimal are only the odd multiples of 1/16 (0.0625, 0.1875, …).
 */
export function pyFixed3(x: number): string {
  if (Number.isInteger(x * 16) && !Number.isInteger(x * 8)) {
    const down = Math.floor(x * 1000);
    return ((down % 2 === 0 ? down : down + 1) / 1000).toFixed(3);
  }
  return x.toFixed(3);
}

/** Python's "{:20} " + " ".join([fmt] * n): the row name and each cell left-aligned in 20 columns. */
function row(name: string, cells: string[]): string {
  return [name.padEnd(20), ...cells.map((c) => c.padEnd(20))].join(' ');
}

/** The layout of the official `print_scores` for single-turn data (no partial-match or turn sections). */
export function formatScoreTable(t: ScoreTable): string {
  const levels = [...HARDNESS_LEVELS, 'all'] as const;
  const out = [
    row('', [...levels]),
    row(
      'count',
      levels.map((l) => String(t[l].count)),
    ),
  ];
  if (t.all.exec !== undefined) {
    out.push('=====================   EXECUTION ACCURACY     =====================');
    out.push(
      row(
        'execution',
        levels.map((l) => pyFixed3(t[l].exec ?? 0)),
      ),
    );
  }
  if (t.all.match !== undefined) {
    out.push('\n====================== EXACT MATCHING ACCURACY =====================');
    out.push(
      row(
        'exact match',
        levels.map((l) => pyFixed3(t[l].match ?? 0)),
      ),
    );
  }
  return out.join('\n');
}
