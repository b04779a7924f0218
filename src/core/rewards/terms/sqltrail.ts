// SQL-Trail's turn-budget reward (App. A.4, eq. 7):
//   r_turns = 1 if d = simple ∧ t ≤ 2;  1 if d = medium ∧ t ≤ 3;  1 if d ∈ {hard, extra} ∧ r_exec = 1 ∧ t < T;  else 0.
// t is the number of assistant turns of the trajectory (a bare SQL is one turn); T the turn budget.
import type { TermDefinition } from '../types';

export const sqltrailTurns: TermDefinition = {
  id: 'sqltrail.turns',
  description: "solved within the difficulty's turn threshold (simple t≤2, medium t≤3, hard/extra correct and t<T)",
  source: 'SQL-Trail §3.3.2, App. A.4 eq. 7',
  async fn(ctx) {
    const t = ctx.trajectory ? ctx.trajectory.turns.length : 1;
    const tText = ctx.trajectory ? `${t} turn${t === 1 ? '' : 's'}` : 'bare SQL (1 turn)';
    const d = ctx.difficulty;
    const from = ctx.difficultySource === 'gold-hardness' ? ' (Spider hardness of the gold)' : '';
    if (d === null)
      return {
        value: 0,
        explanation: `difficulty unknown (pass --difficulty, or a gold the Spider parser reads): ${tText}`,
        passed: false,
        failure: 'no-difficulty',
      };
    if (d === 'simple' || d === 'medium') {
      const limit = d === 'simple' ? 2 : 3;
      const ok = t <= limit;
      return { value: ok ? 1 : 0, explanation: `${d}${from}: ${tText} ${ok ? '≤' : '>'} ${limit}`, passed: ok };
    }
    const T = ctx.turnBudget;
    const exec = await ctx.verdict(ctx.predSql);
    if (!exec.correct)
      return {
        value: 0,
        explanation: `${d}${from}: final SQL not correct (needs r_exec = 1 and t < ${T})`,
        passed: false,
      };
    const ok = t < T;
    return {
      value: ok ? 1 : 0,
      explanation: `${d}${from}: correct in ${tText} ${ok ? '<' : '≥'} budget ${T}`,
      passed: ok,
    };
  },
};
