// `quarry schema`: a database's schema in one of the protocols' prompt styles, introspected through the sandbox.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { DatabaseOpenError } from '../../core/db/open';
import { renderSchema, SCHEMA_STYLES, DEFAULT_SAMPLE_ROWS, type SchemaStyle } from '../../core/db/schema';
import { introspectViaPool } from '../../core/db/schema/viaPool';
import { createSqlPool } from '../../core/db/pool';
import { assertSqliteFile } from '../../core/db/open';

const usage = `Usage: quarry schema --db FILE [--style list|ddl|names] [--sample-rows N] [--max-chars N] [--json]

Prints a database's schema as it would appear in a model's prompt:
  list   "Table: t" / "- col (TYPE, PRIMARY KEY)" (SkyRL-SQL, SQL-Trail), then foreign keys
  ddl    create table statements with "N example rows from table t" comments (MTSQL-R1, CodeS/OmniSQL)
  names  table names only (SkyRL-SQL's no-schema setting)
--sample-rows defaults to 0 for list and names, 3 for ddl. --json prints the introspected schema instead.
Exit codes: 0 ok, 2 bad input (usage, not a database).`;

function count(name: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--${name} must be a whole number, got '${text}'`);
  return Number(text);
}

export const schemaCommand: Command = {
  name: 'schema',
  summary: "Print a database's schema in a prompt style (list, ddl, names) or as JSON",
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        db: { type: 'string' },
        style: { type: 'string' },
        'sample-rows': { type: 'string' },
        'max-chars': { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.db) throw new UsageError('--db FILE is required');
    const style = (values.style ?? 'list') as SchemaStyle;
    if (!SCHEMA_STYLES.includes(style))
      throw new UsageError(`--style must be one of ${SCHEMA_STYLES.join(', ')}, got '${values.style}'`);
    const sampleRows = count('sample-rows', values['sample-rows']);
    const maxChars = count('max-chars', values['max-chars']);
    let info;
    // Every introspection query runs in the sandbox's killable workers with a time limit: a view that never ends
    // cannot hang this command (its row count reads as unknown).
    const pool = createSqlPool({ size: 1, spares: 0 });
    try {
      const dbPath = resolve(io.cwd, values.db);
      assertSqliteFile(dbPath);
      info = await introspectViaPool(pool, dbPath, { sampleRows: sampleRows ?? Math.max(DEFAULT_SAMPLE_ROWS, 0) });
    } catch (err) {
      if (err instanceof DatabaseOpenError) {
        io.stderr.write(`quarry schema: ${err.message}\n`);
        return EXIT.badInput;
      }
      throw err;
    } finally {
      await pool.close();
    }
    if (values.json) {
      io.stdout.write(
        JSON.stringify(
          info,
          (_k, v: unknown) =>
            typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? `<blob ${v.length} bytes>` : v,
          2,
        ) + '\n',
      );
    } else {
      io.stdout.write(renderSchema(info, { style, sampleRows, maxChars }) + '\n');
    }
    return EXIT.ok;
  },
};
