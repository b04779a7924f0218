// The part of a schema that SQL analysis needs; SchemaInfo from src/core/db/schema fits it as is.
export interface SchemaLike {
  tables: ReadonlyArray<{ name: string; columns: ReadonlyArray<{ name: string }> }>;
}

/** Lower-cased table name → set of lower-cased column names. */
export type SchemaIndex = Map<string, Set<string>>;

export function indexSchema(schema: SchemaLike | undefined): SchemaIndex | undefined {
  if (!schema) return undefined;
  return new Map(schema.tables.map((t) => [t.name.toLowerCase(), new Set(t.columns.map((c) => c.name.toLowerCase()))]));
}
