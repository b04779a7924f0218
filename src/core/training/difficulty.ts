// Curation of RL questions by how a model did on them over G samples: SQL-Trail's selection (App. A.6) — the
// "hard but solvable" questions (0 < pass@G < 1, ranked by S(q) ascending) and the exploration set of questions no
// sample solved — and MTSQL-R1's curriculum (§3.3.1): drop the questions every sample solved, sort the rest by
// success count (higher = easier) and cut them into levels. Pure: the counts come from a `quarry bench` run.
import { curriculumBins, rankHardButSolvable, type RankedQuestion } from '../rewards/group';

export const KEEP_CHOICES = ['all', 'hard-but-solvable', 'unsolved'] as const;
export type KeepChoice = (typeof KEEP_CHOICES)[number];

export function isKeepChoice(v: string): v is KeepChoice {
  return (KEEP_CHOICES as readonly string[]).includes(v);
}

/** How one question did: `correct` of its `total` samples were right by execution. */
export interface QuestionOutcome {
  id: string;
  /** Samples right by execution (EX). */
  correct: number;
  total: number;
  /** Samples right by EX and by MTSQL-R1's string EM (§3.3.1's success count); absent when the run has no EM. */
  correctExEm?: number;
}

export interface Dropped {
  id: string;
  reason: string;
}

interface DifficultySelection {
  /** The questions kept, each with pass@G and S(q): input order for `all` and `unsolved`, S(q) ascending otherwise. */
  kept: RankedQuestion[];
  dropped: Dropped[];
}

/** Keeps the questions `keep` asks for. */
export function selectByDifficulty(outcomes: readonly QuestionOutcome[], keep: KeepChoice): DifficultySelection {
  const ranked = rankHardButSolvable(outcomes);
  const byId = new Map(ranked.map((q) => [q.id, q]));
  const inOrder = outcomes.map((o) => byId.get(o.id)!);
  const dropped: Dropped[] = [];
  const drop = (q: RankedQuestion, reason: string) => dropped.push({ id: q.id, reason });
  switch (keep) {
    case 'all':
      return { kept: inOrder, dropped };
    case 'hard-but-solvable': {
      const kept = ranked.filter((q) => q.pass > 0 && q.pass < 1);
      for (const q of inOrder) {
        if (q.pass === 0) drop(q, `unsolved: none of the ${q.total} samples is correct`);
        else if (q.pass === 1) drop(q, `solved by all ${q.total} samples`);
      }
      return { kept, dropped };
    }
    case 'unsolved': {
      const kept = inOrder.filter((q) => q.pass === 0);
      for (const q of inOrder) if (q.pass > 0) drop(q, `solved by ${q.correct} of ${q.total} samples`);
      return { kept, dropped };
    }
  }
}

interface CurriculumLevel {
  /** 1 = the easiest. */
  level: number;
  ids: string[];
  /** Fewest and most correct samples among the level's questions. */
  successes: { min: number; max: number };
}

interface Curriculum {
  /** What a success was: EX and EM (the paper), or EX alone when the run recorded no per-sample EM. */
  countedBy: 'ex+em' | 'ex';
  levels: CurriculumLevel[];
  /** Questions every sample solved: too easy (MTSQL-R1 discards them). */
  discarded: Dropped[];
}

/**
 * MTSQL-R1's curriculum over `bins` levels of equal size (the last may be smaller): questions every one of the G
 * samples solved are discarded, the rest sorted by success count descending (ties keep input order). §3.3.1: "s_i =
 * #{correct out of 20, measured by EX and EM}": a sample counts when it is right by both (`correctExEm`); a run
 * without per-sample EM (made before it was recorded) falls back to EX, and `countedBy` says which was used.
 */
export function curriculumLevels(outcomes: readonly QuestionOutcome[], bins: number): Curriculum {
  if (!Number.isInteger(bins) || bins < 1)
    throw new RangeError(`the number of curriculum bins must be a positive integer, got ${bins}`);
  const totals = new Set(outcomes.map((o) => o.total));
  if (totals.size > 1)
    throw new RangeError(
      `questions have different sample counts (${[...totals].join(', ')}); a curriculum needs the same G for all`,
    );
  const samples = outcomes[0]?.total ?? 1;
  const countedBy = outcomes.every((o) => o.correctExEm !== undefined) ? 'ex+em' : 'ex';
  const items = outcomes.map((o) => ({ id: o.id, successes: countedBy === 'ex+em' ? o.correctExEm! : o.correct }));
  const candidates = items.filter((it) => it.successes < samples).length;
  const binSize = Math.max(1, Math.ceil(candidates / bins));
  const { levels, discarded } = curriculumBins(items, { samples, binSize });
  return {
    countedBy,
    levels: levels.map((qs, i) => ({
      level: i + 1,
      ids: qs.map((q) => q.id),
      successes: { min: Math.min(...qs.map((q) => q.successes)), max: Math.max(...qs.map((q) => q.successes)) },
    })),
    discarded: discarded.map((q) => ({
      id: q.id,
      reason:
        `solved by all ${samples} samples (${countedBy === 'ex+em' ? 'EX and EM' : 'EX'}): too easy for the ` +
        'curriculum (MTSQL-R1 §3.3.1)',
    })),
  };
}
