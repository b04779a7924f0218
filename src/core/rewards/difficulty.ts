// SQL-Trail's r_turns thresholds are stated for simple / medium / hard / extra (App. A.4, eq. 7); its data section
// uses Spider's classification (easy / medium / hard / extra), so `simple` is Spider's `easy`.
import type { Hardness } from '../sql/hardness';
import { DIFFICULTIES, type Difficulty } from './types';

export function difficultyFromHardness(h: Hardness): Difficulty {
  return h === 'easy' ? 'simple' : h;
}

/** Accepts a difficulty or a Spider hardness name (`easy` → `simple`); undefined for anything else. */
export function parseDifficulty(text: string): Difficulty | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'easy') return 'simple';
  return (DIFFICULTIES as readonly string[]).includes(t) ? (t as Difficulty) : undefined;
}
