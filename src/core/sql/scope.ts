// Name resolution inside one SELECT: which base table (if any) an alias or bare column refers to.
import type { SchemaIndex } from './schemaLike';

/** What a name in FROM stands for: a base table, or something that is not one (a CTE, a derived table). */
type Source = { kind: 'table'; table: string } | { kind: 'derived' };

export class Scope {
  /** alias or table name (lower-cased) → source */
  readonly sources = new Map<string, Source>();
  /** Output aliases of the SELECT list, which ORDER BY / HAVING may name. */
  readonly selectAliases = new Set<string>();

  constructor(
    readonly parent: Scope | undefined,
    readonly ctes: ReadonlySet<string>,
  ) {}

  resolveQualifier(name: string): Source | undefined {
    const key = name.toLowerCase();
    return this.sources.get(key) ?? this.parent?.resolveQualifier(key);
  }

  /** The base table holding an unqualified column: innermost scope first, first table in FROM order. */
  resolveColumn(column: string, schema: SchemaIndex | undefined): string | undefined {
    if (!schema) return undefined;
    const key = column.toLowerCase();
    for (const s of this.sources.values()) {
      if (s.kind === 'table' && schema.get(s.table)?.has(key)) return s.table;
    }
    return this.parent?.resolveColumn(column, schema);
  }

  hasDerivedSources(): boolean {
    return [...this.sources.values()].some((s) => s.kind === 'derived');
  }
}
