// SQL analysis on node-sql-parser's SQLite grammar: parsing that never throws, normalisation for exact match,
// schema items for r_schema, clauses for clause-match F1, bigrams for r_bigram.
export { parseSql, SUBQUERY_PLACEHOLDER } from './parse';
export type { ParseResult, ParsedQuery, ParseFailure, QueryNode, SelectAst, SetOp } from './parse';
export { normalizeSql, normalizedTokens } from './normalize';
export { extractSchemaItems, extractByTokens, schemaItemSet } from './schemaItems';
export type { SchemaItems } from './schemaItems';
export { extractClauses } from './clauses';
export type { ClauseResult, ClauseSets, QueryClauses, SelectClauses, FromItem } from './clauses';
export { sqlBigrams, jaccard, bigramSimilarity } from './bigrams';
export { tokenize, unquoteIdent } from './tokens';
export type { Token, TokenKind } from './tokens';
export type { SchemaLike } from './schemaLike';
