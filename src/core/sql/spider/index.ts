// The official Spider SQL reading (process_sql.py): schema, tokenizer, parser, foreign-key maps.
export { SpiderParseError } from './pyErrors';
export { spiderTokenize, nltkWordTokenize } from './tokenize';
export { parseSpiderSql } from './parse';
export {
  buildSpiderSchema,
  loadSpiderSchema,
  schemaFromTablesEntry,
  type SpiderSchema,
  type TablesJsonEntry,
} from './schema';
export { foreignKeyMap, foreignKeyMaps } from './foreignKeys';
export * from './types';
export { spiderHardness } from '../hardness';
