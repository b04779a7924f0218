// Schema introspection and prompt rendering: the public face of src/core/db/schema.
export { introspectSchema, introspectHandle, DEFAULT_SAMPLE_ROWS } from './introspect';
export type { IntrospectOptions } from './introspect';
export { renderSchema, DEFAULT_DDL_SAMPLE_ROWS } from './render';
export type { RenderOptions } from './render';
export { SCHEMA_STYLES } from './renderStyles';
export type { SchemaStyle } from './renderStyles';
export { quoteIdent, quoteIdentIfNeeded } from './quote';
export type { SchemaInfo, TableInfo, ColumnInfo, ForeignKeyInfo, ColumnDescriptions } from './types';
