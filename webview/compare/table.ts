// The compare panel's EX table as text, without the DOM: one row per hardness level (n, then greedy / majority /
// pass@K per model), so what each cell says is unit-tested.
import { levelExCells, type CheckpointComparison } from '../../src/core/training/checkpointCompare';

interface ExCells {
  model: string;
  greedy: string;
  majority: string;
  passAtK: string;
}

interface ExRow {
  level: string;
  n: string;
  cells: ExCells[];
}

export function exTableRows(c: CheckpointComparison): ExRow[] {
  return c.levels.map((level) => {
    const first = c.models.map((m) => c.byLevel[level][m]).find((x) => x);
    return {
      level,
      n: String(first?.count ?? 0),
      cells: c.models.map((model) => {
        // A level absent from this model's report, or with no questions, has no score: –, not 0.0.
        const [greedy, majority, passAtK] = levelExCells(c.byLevel[level][model], '–');
        return { model, greedy, majority, passAtK };
      }),
    };
  });
}
