// The official Spider SQL reading (process_sql.py): schema, tokenizer, parser, foreign-key maps.
export { SpiderParseError } from './pyErrors';
export { spiderTokenize, nltkWordTokenize } from './tokenize';
export { parseSpiderSql, tablesWithAlias } from './parse';
export {
  buildSpiderSchema,
  readSpiderSchema,
  loadSpiderSchema,
  schemaFromTablesEntry,
  type SpiderSchema,
  type TablesJsonEntry,
} from './schema';
export { foreignKeyMap, foreignKeyMaps, type ForeignKeyMap } from './foreignKeys';
export * from './types';
export { spiderHardness, hardnessOfParsed, type Hardness, type HardnessResult } from '../hardness';
