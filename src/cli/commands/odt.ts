// `quarry odt`: Progress-SQL's oracle-guided diagnostic tree of a prediction against its gold: both trees, the
// node matching, the similarity, the tags and the feedback text (docs/rewards.md).
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { compareOdt, renderTree, renderMatch, TAG_MEANINGS, type OdtBuild } from '../../core/rewards/odt';
import { odtJson } from '../../core/rewards/odt/json';
import { introspectSchema } from '../../core/db/schema';
import type { SchemaLike } from '../../core/sql';

const usage = `Usage: quarry odt --pred SQL --gold SQL [--db FILE] [--json]

Compares a predicted query with the gold query as Progress-SQL's oracle-guided diagnostic tree (App. D): both trees,
the structural score (F_struct), the lexical bigram Jaccard (F_lex), F = ½(F_struct + F_lex), the diagnostic tags
(Tables 6, 7) and the next-turn feedback text (App. F).
  --db FILE   resolve unqualified columns in multi-table queries through this database's schema
  --json      print {"pred", "gold", "predError", "goldError", "struct", "lexical", "F", "tags", "reasons", "feedback"}
              (pred/gold are the trees, null when a query does not parse)`;

export const odtCommand: Command = {
  name: 'odt',
  summary: "Compare a predicted and a gold query with Progress-SQL's diagnostic tree: scores, tags, feedback",
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        pred: { type: 'string' },
        gold: { type: 'string' },
        db: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (values.pred === undefined) throw new UsageError('--pred SQL is required');
    if (values.gold === undefined) throw new UsageError('--gold SQL is required');
    let schema: SchemaLike | undefined;
    if (values.db !== undefined) {
      const path = resolve(io.cwd, values.db);
      if (!existsSync(path)) throw new UsageError(`--db: no such file: ${path}`);
      try {
        schema = introspectSchema(path, { sampleRows: 0, countRows: false });
      } catch (err) {
        io.stderr.write(`quarry odt: cannot read the schema of ${path}: ${(err as Error).message}\n`);
        return EXIT.badInput;
      }
    }
    const c = compareOdt(values.pred, values.gold, { schema });
    if (values.json) {
      io.stdout.write(JSON.stringify(odtJson(c)) + '\n');
      return EXIT.ok;
    }
    const out: string[] = [];
    const section = (title: string, b: OdtBuild) => {
      out.push(`${title}:`);
      if (b.ok) out.push(...renderTree(b.root, '  '));
      else out.push(`  (does not parse: ${b.error}; F_struct is 0)`);
    };
    section('Predicted ODT', c.pred);
    section('Gold ODT', c.gold);
    if (c.match) {
      out.push('Matching (gold ← predicted):');
      out.push(...renderMatch(c.match, '  '));
    }
    const f = (x: number) => x.toFixed(4);
    out.push(`F_struct  ${f(c.struct)}`);
    out.push(`F_lex     ${f(c.lexical)}`);
    out.push(`F         ${f(c.F)}  (½(F_struct + F_lex))`);
    if (c.tags.length === 0) out.push(c.pred.ok && c.gold.ok ? 'Tags: none' : 'Tags: none (no tree to compare)');
    else {
      out.push('Tags:');
      for (const t of c.tags) {
        const why = c.reasons
          .filter((r) => r.tag === t)
          .map((r) => r.detail)
          .join('; ');
        out.push(`  ${t} — ${TAG_MEANINGS[t]} (${why})`);
      }
    }
    out.push(`Feedback: ${c.feedback === null ? '(none: no structural issue)' : ''}`);
    if (c.feedback !== null) out.push(`  ${c.feedback}`);
    io.stdout.write(out.join('\n') + '\n');
    return EXIT.ok;
  },
};
