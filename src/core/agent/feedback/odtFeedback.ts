// Progress-SQL's oracle feedback as the agent's FeedbackSource (src/core/agent/protocol.ts): null when the SQL returns
// the gold result (the rollout stops there, Algorithm 1), else the next turn's "Feedback: …" text (App. F) built
// from the ODT's diagnostic tags (App. D). Gold trees and database schemas are cached per (database, gold).
//
// Two cases the paper leaves without wording, answered here (docs/rewards.md, "ODT"):
//   - the prediction differs in result but the ODT finds no clause-level issue (ODT compares structure with values
//     as placeholders, so a wrong literal is invisible to it): NO_STRUCTURAL_ISSUE_FEEDBACK;
//   - the result could not be judged (gold fails, judge timed out): ODT feedback as usual; with no tags, the same
//     no-structural-issue text — never null, since null means "correct".
import { buildOdt, compareOdt, type OdtBuild } from '../../rewards/odt';
import { sqlBigrams } from '../../sql';
import { introspectSchema } from '../../db/schema';
import type { SchemaLike } from '../../sql';
import type { FeedbackSource } from '../protocol';
import type { Task } from '../types';
import { createResultJudge, type JudgeOptions, type ResultJudge } from './judge';

export const NO_STRUCTURAL_ISSUE_FEEDBACK =
  'Feedback: your previous SQL has no clause-level structural issues, but its result ' +
  'differs from the expected result; check literal values, conditions and selected columns. Revise your ' +
  'previous answer for SQLite. ' +
  'Put step-by-step reasoning inside <think>...</think>, then output exactly one corrected SQLite query ' +
  'inside <sql>...</sql>. ' +
  'Do not output any text outside those tags.';

interface OdtFeedbackOptions extends JudgeOptions {
  /** Decides result equality; default a sandboxed child-process judge (judge.ts). */
  judge?: ResultJudge;
  /** Gold trees kept (per database and gold SQL); default 10,000. */
  cacheSize?: number;
}

interface OdtFeedbackSource extends FeedbackSource {
  /** Gold trees built so far (for tests and statistics). */
  readonly goldTreesBuilt: () => number;
}

interface GoldEntry {
  tree: OdtBuild;
  bigrams: Set<string>;
}

export function createOdtFeedback(opts: OdtFeedbackOptions = {}): OdtFeedbackSource {
  const judge = opts.judge ?? createResultJudge(opts);
  const cacheSize = opts.cacheSize ?? 10_000;
  const golds = new Map<string, GoldEntry>();
  const schemas = new Map<string, SchemaLike | undefined>();
  let built = 0;

  const schemaOf = (dbPath: string): SchemaLike | undefined => {
    if (!schemas.has(dbPath)) {
      let s: SchemaLike | undefined;
      try {
        s = introspectSchema(dbPath, { sampleRows: 0, countRows: false });
      } catch {
        s = undefined;
      }
      if (schemas.size >= 1000) schemas.clear();
      schemas.set(dbPath, s);
    }
    return schemas.get(dbPath);
  };

  const goldOf = (dbPath: string, gold: string, schema: SchemaLike | undefined): GoldEntry => {
    const key = dbPath + '\0' + gold;
    let e = golds.get(key);
    if (!e) {
      if (golds.size >= cacheSize) golds.clear();
      e = { tree: buildOdt(gold, { schema }), bigrams: sqlBigrams(gold) };
      built++;
      golds.set(key, e);
    }
    return e;
  };

  const source = (predSql: string, task: Task): string | null => {
    const gold = task.gold;
    if (typeof gold !== 'string' || gold.trim() === '') {
      throw new Error("ODT feedback needs the task's gold SQL (Progress-SQL feedback is oracle-guided)");
    }
    if (judge(predSql, gold, task.dbPath).correct === true) return null;
    const schema = schemaOf(task.dbPath);
    const g = goldOf(task.dbPath, gold, schema);
    const c = compareOdt(predSql, gold, { schema, goldTree: g.tree, goldBigrams: g.bigrams });
    return c.feedback ?? NO_STRUCTURAL_ISSUE_FEEDBACK;
  };
  return Object.assign(source, { goldTreesBuilt: () => built });
}

/** The default FeedbackSource for the `progress` protocol: ODT feedback with the sandboxed result judge. */
export const odtFeedback: OdtFeedbackSource = createOdtFeedback();
