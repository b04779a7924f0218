// RL prompts from a trajectory set: one prompt per distinct task (database + question + conversation history), with
// the gold SQL a reviewer gave when there is one, else the task's own gold. docs/editor.md ("Labeling") describes it.
import type { Hardness } from '../sql/hardness';
import type { TrajectoryRecord } from '../trajectories/types';
import { hasCorrection, type Label } from './types';

export const RL_SCHEMA = 'quarry.rl-prompt/1';

interface RlPrompt {
  schema: typeof RL_SCHEMA;
  question: string;
  evidence: string | null;
  /** Earlier turns of a multi-turn conversation (SParC/CoSQL style), oldest first; empty for a single question. */
  history: { question: string; sql: string }[];
  db: { path: string; id: string | null };
  gold_sql: string;
  /** `label`: a reviewer's corrected SQL; `task`: the task's gold as recorded. */
  gold_source: 'label' | 'task';
  difficulty: Hardness | null;
  /** The task id when the producer recorded one, and the trajectories this prompt was taken from. */
  task_id: string | null;
  trajectory_ids: string[];
}

export interface RlSkip {
  id: string;
  reason: string;
}

function taskKey(r: TrajectoryRecord): string {
  return JSON.stringify([r.task.db.path, r.task.question, r.task.history.map((h) => [h.question, h.sql])]);
}

/**
 * Prompts in first-seen order. Among one task's trajectories, the most recently saved label with a corrected SQL
 * gives the gold; without one the task's gold is used; a task with neither is skipped (listed in `skipped`).
 */
export function toRlPrompts(
  records: readonly TrajectoryRecord[],
  labels: ReadonlyMap<string, Label>,
): { prompts: RlPrompt[]; skipped: RlSkip[] } {
  const groups = new Map<string, TrajectoryRecord[]>();
  for (const r of records) {
    const k = taskKey(r);
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  const prompts: RlPrompt[] = [];
  const skipped: RlSkip[] = [];
  for (const group of groups.values()) {
    const first = group[0];
    let best: Label | null = null;
    for (const r of group) {
      const l = labels.get(r.id);
      if (hasCorrection(l) && (best === null || l.updatedAt > best.updatedAt)) best = l;
    }
    const taskGold = first.task.gold !== null && first.task.gold.trim() !== '' ? first.task.gold : null;
    const gold = best?.correctedSql?.trim() ?? taskGold;
    if (!gold) {
      skipped.push({ id: first.id, reason: 'no gold SQL: the task has none and no label gives a corrected SQL' });
      continue;
    }
    prompts.push({
      schema: RL_SCHEMA,
      question: first.task.question,
      evidence: first.task.evidence,
      history: first.task.history.map((h) => ({ question: h.question, sql: h.sql })),
      db: { path: first.task.db.path, id: first.task.db.id },
      gold_sql: gold,
      gold_source: best ? 'label' : 'task',
      difficulty: first.task.difficulty,
      task_id: first.task.id,
      trajectory_ids: group.map((r) => r.id),
    });
  }
  return { prompts, skipped };
}
