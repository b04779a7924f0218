// Terms several papers share: execution match, executability, format validity, bigram and schema-item Jaccard.
// Values are parameters so each paper's panel sets its own (MTIR-SQL's ±0.1, SkyRL-SQL's −1…).
import { jaccard } from '../../sql';
import { bigramsOf, brief, schemaItemsOf } from '../analysis';
import { checkFormat, type FormatRule } from '../format';
import type { ExecOutcome, TermContext, TermDefinition } from '../types';

const num = (ctx: TermContext, key: string, fallback: number): number => {
  const v = ctx.params[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
};

/**
 * Why a verdict is what it is, in one line; over a test suite, how many of its databases the answer was checked on
 * and which one disagreed.
 */
function describeVerdict(v: ExecOutcome, mode: string): string {
  const s = v.suite;
  if (!s) return describeSingle(v, mode);
  const over = `${s.databases} database${s.databases === 1 ? '' : 's'} of the test suite`;
  if (v.correct) return `${describeSingle(v, mode)}; checked over ${over}, all agree`;
  if (!s.singleCorrect) return `${describeSingle(v, mode)} (not checked further over ${over})`;
  const why = v.reason.startsWith('gold-')
    ? `the gold SQL failed there: ${brief(v.detail ?? 'error', 60)}`
    : v.reason.startsWith('pred-')
      ? `the final SQL failed there: ${brief(v.detail ?? 'error', 60)}`
      : `result differs (${v.reason})`;
  return (
    `final SQL matches the gold on its database but not on test-suite variant ${s.disagreed}: ${why}; ` +
    `checked over ${over} (${mode} mode)`
  );
}

function describeSingle(v: ExecOutcome, mode: string): string {
  const rows = (n: number) => `${n} row${n === 1 ? '' : 's'}`;
  switch (v.reason) {
    case 'match':
      return v.goldEmpty
        ? `final SQL matches the gold result (${mode} mode) — but the gold result is empty`
        : `final SQL returns the gold result (${mode} mode, ${rows(v.gold!.rows.length)})`;
    case 'missing-prediction':
      return 'no final SQL to execute';
    case 'empty-prediction':
      return 'the final SQL is empty';
    case 'pred-error':
      return `final SQL failed: ${brief(v.detail ?? 'error', 80)}`;
    case 'pred-timeout':
      return `final SQL timed out (${brief(v.detail ?? '', 60)})`;
    case 'gold-error':
      return `gold SQL failed, nothing to compare with: ${brief(v.detail ?? 'error', 70)}`;
    case 'gold-timeout':
      return 'gold SQL timed out, nothing to compare with';
    case 'row-count':
      return `result differs: ${rows(v.pred!.rows.length)} vs gold ${rows(v.gold!.rows.length)}`;
    case 'columns':
      return `result differs: ${v.pred!.columns.length} columns vs gold ${v.gold!.columns.length}`;
    case 'order':
      return 'result has the gold rows in a different order (gold has ORDER BY)';
    case 'values':
      return `result differs in values (${rows(v.pred!.rows.length)}, same shape as gold)`;
    default:
      return `result differs (${v.reason})`;
  }
}

export const execMatch: TermDefinition = {
  id: 'exec.match',
  description: "the final SQL's result equals the gold result under the comparison mode",
  source: 'SQL-Trail eq. 6; SkyRL-SQL §4.1; MTIR-SQL eq. 7; MTSQL-R1 R_EX',
  defaultParams: { match: 1, miss: 0 },
  async fn(ctx) {
    const v = await ctx.verdict(ctx.predSql);
    return {
      value: v.correct ? num(ctx, 'match', 1) : num(ctx, 'miss', 0),
      explanation: describeVerdict(v, ctx.mode.name),
      passed: v.correct,
      failure: v.correct ? undefined : v.reason,
      data: { reason: v.reason, goldEmpty: v.goldEmpty, ...(v.suite ? { suite: v.suite } : {}) },
    };
  },
};

export const sqlExecutable: TermDefinition = {
  id: 'sql.executable',
  description: 'the final SQL runs without error on the database',
  source: 'SQL-Trail eq. 8 (r_syntax); MTIR-SQL eq. 6',
  defaultParams: { ok: 1, fail: 0 },
  async fn(ctx) {
    if (ctx.predSql === null || ctx.predSql.trim() === '') {
      return {
        value: num(ctx, 'fail', 0),
        explanation: 'no final SQL to execute',
        passed: false,
        failure: 'missing-prediction',
      };
    }
    // The SQL as written, not as the comparison mode rewrites it (spider mode drops DISTINCT): a cache hit whenever
    // the mode left it unchanged.
    const r = await ctx.resources.exec(ctx.input.dbPath, ctx.predSql);
    if (r.ok)
      return {
        value: num(ctx, 'ok', 1),
        explanation: `final SQL executes (${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`,
        passed: true,
      };
    const timeout = r.errorClass === 'timeout';
    return {
      value: num(ctx, 'fail', 0),
      explanation: timeout
        ? `final SQL did not finish: ${brief(r.error ?? 'timeout', 70)}`
        : `final SQL does not execute: ${brief(r.error ?? 'error', 70)}`,
      passed: false,
      failure: timeout ? 'pred-timeout' : r.errorClass === 'rejected' ? 'pred-rejected' : 'pred-error',
    };
  },
};

export const formatValid: TermDefinition = {
  id: 'format.valid',
  description: "the model output follows its protocol's required tags (rule per paper, see format.ts)",
  source: 'SkyRL-SQL §4.1; SQL-Trail eq. 11; MTIR-SQL eq. 5',
  defaultParams: { valid: 1, invalid: 0 },
  fn(ctx) {
    const rule = typeof ctx.params.rule === 'string' ? (ctx.params.rule as FormatRule) : undefined;
    const f = checkFormat(ctx.trajectory, rule);
    return {
      value: f.ok ? num(ctx, 'valid', 1) : num(ctx, 'invalid', 0),
      explanation: f.ok ? `format valid: ${f.explanation}` : `format invalid (${f.kind}): ${f.explanation}`,
      passed: f.ok,
      failure: f.kind,
    };
  },
};

export const sqlBigram: TermDefinition = {
  id: 'sql.bigram',
  description: 'Jaccard similarity of the token bigrams of the final SQL and the gold SQL',
  source: 'SQL-Trail App. A.4, eq. 9',
  fn(ctx) {
    if (ctx.predSql === null || ctx.predSql.trim() === '')
      return { value: 0, explanation: 'no final SQL: no bigrams to compare' };
    const gold = bigramsOf(ctx.resources, ctx.input.goldSql);
    const pred = bigramsOf(ctx.resources, ctx.predSql);
    let inter = 0;
    for (const b of pred) if (gold.has(b)) inter++;
    const union = pred.size + gold.size - inter;
    const value = jaccard(pred, gold);
    return {
      value,
      explanation: `${inter} of ${union} distinct bigrams shared (${pred.size} predicted, ${gold.size} gold)`,
    };
  },
};

export const sqlSchema: TermDefinition = {
  id: 'sql.schema',
  description: 'Jaccard similarity of the schema items (tables and columns) of the final SQL and the gold SQL',
  source: 'SQL-Trail App. A.4, eq. 10',
  fn(ctx) {
    if (ctx.predSql === null || ctx.predSql.trim() === '')
      return { value: 0, explanation: 'no final SQL: no schema items to compare' };
    const gold = schemaItemsOf(ctx.resources, ctx.input.dbPath, ctx.input.goldSql);
    const pred = schemaItemsOf(ctx.resources, ctx.input.dbPath, ctx.predSql);
    const inter = [...pred.items].filter((x) => gold.items.has(x));
    const missing = [...gold.items].filter((x) => !pred.items.has(x)).map(shortItem);
    const extra = [...pred.items].filter((x) => !gold.items.has(x)).map(shortItem);
    const union = pred.items.size + gold.items.size - inter.length;
    const value = jaccard(pred.items, gold.items);
    const parts = [`${inter.length} of ${union} tables/columns shared`];
    if (missing.length) parts.push(`missing ${list(missing)}`);
    if (extra.length) parts.push(`extra ${list(extra)}`);
    if (pred.method === 'tokens') parts.push('final SQL did not parse: items read from tokens');
    return { value, explanation: parts.join('; ') };
  },
};

function shortItem(item: string): string {
  return item.replace(/^table:/, '').replace(/^column:/, '');
}

function list(items: string[]): string {
  return items.length <= 4 ? items.join(', ') : `${items.slice(0, 4).join(', ')} +${items.length - 4}`;
}
