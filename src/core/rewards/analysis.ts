// SQL analyses the terms need, memoised through the scoring resources so each gold query is parsed once per run
// (and a prediction once, however many terms look at it).
import { sqlBigrams, extractSchemaItems, schemaItemSet, extractClauses, type ClauseResult } from '../sql';
import type { SchemaLike } from '../sql';
import { introspectSchema } from '../db/schema';
import type { ScoringResources } from './types';

/** The database's tables and columns (for resolving unqualified columns); undefined when it cannot be read. */
export function dbSchema(res: ScoringResources, dbPath: string): SchemaLike | undefined {
  return res.memo('dbSchema', dbPath, () => {
    try {
      return introspectSchema(dbPath, { sampleRows: 0, countRows: false });
    } catch {
      return undefined;
    }
  });
}

export function bigramsOf(res: ScoringResources, sql: string): Set<string> {
  return res.memo('bigrams', sql, () => sqlBigrams(sql));
}

interface SchemaItemsInfo {
  items: Set<string>;
  method: 'parser' | 'tokens';
}

export function schemaItemsOf(res: ScoringResources, dbPath: string, sql: string): SchemaItemsInfo {
  return res.memo('schemaItems', dbPath + '\0' + sql, () => {
    const r = extractSchemaItems(sql, dbSchema(res, dbPath));
    return { items: schemaItemSet(r), method: r.method };
  });
}

export function clausesOf(res: ScoringResources, dbPath: string, sql: string): ClauseResult {
  return res.memo('clauses', dbPath + '\0' + sql, () => extractClauses(sql, dbSchema(res, dbPath)));
}

/** Shortens a SQL text or message for one-line explanations. */
export function brief(text: string, max = 60): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}
