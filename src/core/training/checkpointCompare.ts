// Comparing checkpoints on the same benchmark: EX for greedy decoding, majority vote and pass@K by hardness, side by
// side, and the questions one model gets right (greedy) and another wrong, from each model's bench report.json. Only
// questions present in every report are compared; a question is matched by its dataset id, else its index.
import type { BenchReport, LevelEx } from '../datasetRuns/report';
import type { QuestionScore } from '../datasetRuns/scoreQuestion';

export interface CompareInput {
  name: string;
  report: Pick<BenchReport, 'byHardness' | 'questions' | 'dataset' | 'protocol' | 'samples'>;
  /** The run's trajectories.jsonl (Replay opens a question's greedy trajectory from it). */
  trajectories: string;
}

interface Disagreement {
  key: string;
  id: string;
  index: number;
  dbId: string;
  level: string | null;
  /** The models whose greedy answer is right, and those whose is wrong. */
  right: string[];
  wrong: string[];
}

export interface CheckpointComparison {
  models: string[];
  /** The levels in the reports' order, `all` last. */
  levels: string[];
  /** byLevel[level][model]: that model's EX at that level (null when the level is absent from its report). */
  byLevel: Record<string, Record<string, LevelEx | null>>;
  /** Questions scored in every report. */
  common: number;
  disagreements: Disagreement[];
}

function keyOf(q: QuestionScore): string {
  return q.id ? `id:${q.id}` : `index:${q.index}`;
}

export function compareCheckpoints(inputs: readonly CompareInput[]): CheckpointComparison {
  if (inputs.length < 2) throw new Error('compare needs at least two models');
  const names = inputs.map((i) => i.name);
  if (new Set(names).size !== names.length) throw new Error(`a model is named twice: ${names.join(', ')}`);
  const levels: string[] = [];
  for (const i of inputs)
    for (const l of Object.keys(i.report.byHardness)) if (l !== 'all' && !levels.includes(l)) levels.push(l);
  levels.push('all');
  const byLevel: CheckpointComparison['byLevel'] = {};
  for (const l of levels) {
    byLevel[l] = {};
    for (const i of inputs) byLevel[l][i.name] = i.report.byHardness[l] ?? null;
  }
  const maps = inputs.map((i) => new Map(i.report.questions.map((q) => [keyOf(q), q] as const)));
  const disagreements: Disagreement[] = [];
  let common = 0;
  for (const [key, q0] of maps[0]) {
    const qs = maps.map((m) => m.get(key));
    if (qs.some((q) => !q)) continue;
    common++;
    const right = inputs.filter((_, j) => qs[j]!.greedy).map((i) => i.name);
    if (right.length === 0 || right.length === inputs.length) continue;
    disagreements.push({
      key,
      id: q0.id,
      index: q0.index,
      dbId: q0.dbId,
      level: q0.level,
      right,
      wrong: names.filter((n) => !right.includes(n)),
    });
  }
  return { models: names, levels, byLevel, common, disagreements };
}

/**
 * A level's EX as percents (greedy, majority, pass@K), `none` where there is no rate: the level is absent from the
 * report, a rate is null (no vote), or the level has no questions (0 of 0 is no score, not 0.0).
 */
export function levelExCells(x: LevelEx | null | undefined, none: string): [string, string, string] {
  const pct = (v: number | null) => (v === null || !x || x.count === 0 ? none : (100 * v).toFixed(1));
  return x ? [pct(x.greedy), pct(x.majority), pct(x.passAtK)] : [none, none, none];
}

/** The comparison as a text table (EX % greedy / majority / pass@K per model, rows by level) and the disagreements. */
export function formatComparison(c: CheckpointComparison): string {
  const head = ['level', 'n', ...c.models.map((m) => `${m} (greedy/maj/pass@K)`)];
  const rows = c.levels.map((l) => {
    const first = c.models.map((m) => c.byLevel[l][m]).find((x) => x);
    return [
      l,
      String(first?.count ?? 0),
      ...c.models.map((m) => {
        const x = c.byLevel[l][m];
        return x && x.count > 0 ? levelExCells(x, '-').join(' / ') : '-';
      }),
    ];
  });
  const widths = head.map((h, j) => Math.max(h.length, ...rows.map((r) => r[j].length)));
  const line = (r: string[]) =>
    r
      .map((cell, j) => cell.padEnd(widths[j]))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...rows.map(line), ''];
  out.push(`${c.disagreements.length} of ${c.common} common questions where the greedy answers disagree:`);
  for (const d of c.disagreements)
    out.push(
      `  ${d.id || `#${d.index}`} [${d.level ?? '?'}] ${d.dbId}: ` +
        `right ${d.right.join(', ')}; wrong ${d.wrong.join(', ')}`,
    );
  return out.join('\n');
}
