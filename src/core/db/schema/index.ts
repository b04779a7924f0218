// Schema introspection and prompt rendering: the public face of src/core/db/schema.
export { introspectSchema, DEFAULT_SAMPLE_ROWS } from './introspect';
export { renderSchema } from './render';
export { SCHEMA_STYLES } from './renderStyles';
export type { SchemaStyle } from './renderStyles';
export { quoteIdent } from './quote';
