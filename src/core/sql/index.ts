// SQL analysis on node-sql-parser's SQLite grammar: parsing that never throws, normalisation for exact match,
// schema items for r_schema, clauses for clause-match F1, bigrams for r_bigram.
export { parseSql } from './parse';
export { normalizeSql } from './normalize';
export { extractSchemaItems, extractByTokens, schemaItemSet } from './schemaItems';
export { extractClauses } from './clauses';
export type { ClauseResult, ClauseSets } from './clauses';
export { sqlBigrams, jaccard, bigramSimilarity } from './bigrams';
export { tokenize } from './tokens';
export type { SchemaLike } from './schemaLike';
