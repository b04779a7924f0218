// `quarry eval`: execution accuracy and exact-set match of a predictions file against gold, with the official
// evaluators' rules in each mode (docs/eval-modes.md).
import { parseArgs } from 'node:util';
import { readFileSync, writeFileSync, statSync, existsSync } from 'node:fs';
import { checkOutputPath, OutputRefused } from '../../core/util/outputPath';
import { resolve, dirname } from 'node:path';
import { cpus } from 'node:os';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { createSqlPool } from '../../core/db';
import { positiveInt } from '../../core/db/execOptions';
import { ANSWER_CHECKS, evalMode } from '../../core/eval/modes';
import { parseGold, parsePredictions } from '../../core/eval/inputFiles';
import { runEval, type EvalReport, type EvalType } from '../../core/eval/runEval';
import { type Disagreement, explainDisagreements, formatDisagreementCounts } from '../../core/eval/compareModes';
import { formatScoreTable } from '../../core/eval/scores';
import { spiderScorer } from '../../core/eval/spiderScorer';

const usage =
  `Usage: quarry eval --gold GOLD.sql --pred PRED.sql --db-dir DIR [--tables tables.json]
                   [--mode spider|bird|omnisql|spider2|bird-f1|bird-ves] [--etype exec|match|all] [--timeout-ms N] ` +
  `[--jobs N]
                   [--out report.json] [--keep-distinct] [--ignore-order] [--compare-mode MODE] [--ves-iterations N]

Scores predicted SQL against gold SQL the way the official evaluators do (see docs/eval-modes.md).
GOLD lines are "SQL<TAB>db_id"; PRED lines are one SQL each, in the same order (an empty line is a wrong prediction).
Databases are DIR/<db_id>/<db_id>.sqlite (spider mode: every *.sqlite in DIR/<db_id>/ is a test-suite database).
  --mode        spider (default; test-suite exec_eval.py), bird (evaluation_ex.py, 30 s), omnisql (BIRD rules, 10 s),
                spider2 (Spider 2.0 column vectors, 60 s), bird-f1 (BIRD mini_dev evaluation_f1.py: Soft-F1, partial
                credit per item; an item counts as correct with F1 = 1), bird-ves (evaluation_ves.py: BIRD's EX, then
                each correct item's prediction and gold timed alternately for its R-VES reward tier)
  --etype       exec (default), match (exact-set match; needs --tables), all
  --timeout-ms  per statement (default: the mode's: spider and spider2 60000, bird, bird-f1 and bird-ves 30000,
                omnisql 10000)
  --jobs        worker processes (default: the number of CPUs)
  --out         write {"items": [...], "totals": {...}} as JSON
  --keep-distinct  spider mode: do not remove DISTINCT (the official --keep_distinct)
  --ignore-order   spider2 mode: compare each column's values sorted (the official ignore_order)
  --compare-mode   also score with this mode (any of the above); items the two modes score differently are listed in
                   the report ("disagreements") with the categories that explain them
  --ves-iterations bird-ves: timed rounds per correct item (default 100, the official iterate_num)
Prints the per-hardness table of the official evaluation.py (bird-f1 and bird-ves: then "Soft-F1 x" or "R-VES x",
as the official scripts total them; report.json items carry each "score"), then warnings. Exit 0, or 2 on bad
input.`;

function fail(io: { stderr: NodeJS.WritableStream }, message: string): number {
  io.stderr.write(`quarry eval: ${message}\n`);
  return EXIT.badInput;
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `cannot read ${what} ${path}: ` +
        `${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`,
    );
  }
}

export const evalCommand: Command = {
  name: 'eval',
  summary: 'Score predicted SQL against gold SQL (execution accuracy, exact-set match) like the official evaluators',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        gold: { type: 'string' },
        pred: { type: 'string' },
        'db-dir': { type: 'string' },
        tables: { type: 'string' },
        mode: { type: 'string' },
        etype: { type: 'string' },
        'timeout-ms': { type: 'string' },
        jobs: { type: 'string' },
        out: { type: 'string' },
        'keep-distinct': { type: 'boolean' },
        'ignore-order': { type: 'boolean' },
        'compare-mode': { type: 'string' },
        'ves-iterations': { type: 'string' },
      },
    });
    if (!values.gold) throw new UsageError('--gold GOLD.sql is required');
    if (!values.pred) throw new UsageError('--pred PRED.sql is required');
    if (!values['db-dir']) throw new UsageError('--db-dir DIR is required');
    const modeName = values.mode ?? 'spider';
    if (!ANSWER_CHECKS.includes(modeName as never))
      throw new UsageError(`--mode must be one of ${ANSWER_CHECKS.join(', ')}`);
    const mode = evalMode(modeName);
    const other = values['compare-mode'];
    if (other !== undefined && !ANSWER_CHECKS.includes(other as never))
      throw new UsageError(`--compare-mode must be one of ${ANSWER_CHECKS.join(', ')}`);
    const etype = (values.etype ?? 'exec') as EvalType;
    if (!['exec', 'match', 'all'].includes(etype)) throw new UsageError('--etype must be exec, match or all');
    let timeoutMs: number, jobs: number, vesIterations: number;
    try {
      timeoutMs = positiveInt('timeout-ms', values['timeout-ms'], mode.defaultTimeoutMs);
      jobs = positiveInt('jobs', values.jobs, cpus().length);
      vesIterations = positiveInt('ves-iterations', values['ves-iterations'], 100);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    if (etype !== 'exec' && !values.tables)
      return fail(io, `--etype ${etype} needs --tables tables.json (exact-set match uses its foreign keys)`);

    const dbDir = resolve(io.cwd, values['db-dir']);
    const outPath = values.out ? resolve(io.cwd, values.out) : undefined;
    if (outPath) {
      try {
        // The report never replaces the gold, the predictions, tables.json or a database.
        checkOutputPath(outPath, {
          inputs: [values.gold, values.pred, values.tables].map((f) => (f ? resolve(io.cwd, f) : null)),
          kind: 'an evaluation report',
          sameKind: (line) => line.trim() === '{' || line.trim().startsWith('{"'),
        });
      } catch (err) {
        if (err instanceof OutputRefused) return fail(io, err.message);
        throw err;
      }
    }
    let gold, preds, tables;
    try {
      gold = parseGold(readText(resolve(io.cwd, values.gold), 'gold file'));
      preds = parsePredictions(readText(resolve(io.cwd, values.pred), 'prediction file'));
      tables = values.tables ? resolve(io.cwd, values.tables) : undefined;
      if (tables) readText(tables, 'tables file');
    } catch (err) {
      return fail(io, (err as Error).message);
    }
    if (!existsSync(dbDir) || !statSync(dbDir).isDirectory()) return fail(io, `--db-dir ${dbDir} is not a directory`);
    if (gold.length === 0) return fail(io, 'the gold file has no queries');
    const missing = [...new Set(gold.map((g) => g.dbId))].filter((id) => mode.databases(dbDir, id).length === 0);
    if (missing.length) {
      return fail(
        io,
        `no database in ${dbDir} for ` +
          `db_id ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ` … (${missing.length})` : ''}` +
          ` (expected ${mode.name === 'spider' ? '<db_id>/*.sqlite' : '<db_id>/<db_id>.sqlite'})`,
      );
    }
    // Checked before the run so a long evaluation is never lost to an unwritable --out.
    if (outPath && (!existsSync(dirname(outPath)) || !statSync(dirname(outPath)).isDirectory())) {
      return fail(io, `cannot write --out ${outPath}: no such directory`);
    }
    let scorer;
    try {
      scorer = spiderScorer({ tablesPath: tables, needExactMatch: etype !== 'exec' });
    } catch (err) {
      return fail(io, (err as Error).message);
    }

    const tty = (io.stderr as { isTTY?: boolean }).isTTY === true;
    // Each worker holds up to 16 groups (a gold query and the predictions judged against it, see
    // core/eval/execution.ts), so it runs the next one without waiting for this process in between and keeps working
    // while this process parses gold queries. No warm spare: a killed worker (a timeout) is replaced by a fresh one,
    // which costs a start-up only when a statement times out.
    const pool = createSqlPool({ size: jobs, pipeline: 16, spares: 0 });
    let report: EvalReport & { disagreements?: Disagreement[] };
    try {
      report = await runEval(gold, preds, {
        mode,
        etype,
        dbDir,
        timeoutMs,
        scorer,
        keepDistinct: values['keep-distinct'],
        ignoreOrder: values['ignore-order'],
        vesIterations,
        vesConcurrency: jobs,
        run: (reqs) => pool.execBatch(reqs),
        runGroups: (groups) => pool.execGroups(groups),
        onProgress: tty
          ? (done, total) => {
              const width = 30,
                filled = Math.round((done / total) * width);
              io.stderr.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
              if (done === total) io.stderr.write('\n');
            }
          : undefined,
      });
      if (other !== undefined && etype !== 'match') {
        const otherMode = evalMode(other);
        const second = await runEval(gold, preds, {
          mode: otherMode,
          etype: 'exec',
          dbDir,
          timeoutMs: positiveInt('timeout-ms', values['timeout-ms'], otherMode.defaultTimeoutMs),
          scorer,
          keepDistinct: values['keep-distinct'],
          ignoreOrder: values['ignore-order'],
          vesIterations,
          vesConcurrency: jobs,
          run: (reqs) => pool.execBatch(reqs),
          runGroups: (groups) => pool.execGroups(groups),
        });
        report.disagreements = await explainDisagreements(gold, preds, report, second, {
          dbDir,
          timeoutMs,
          run: (reqs) => pool.execBatch(reqs),
        });
        io.stderr.write(formatDisagreementCounts(report.disagreements, mode.name, other) + '\n');
      }
    } finally {
      await pool.close();
    }
    io.stdout.write(formatScoreTable(report.totals.byHardness) + '\n');
    if (report.totals.softF1 !== undefined) io.stdout.write(`Soft-F1 ${report.totals.softF1.toFixed(2)}\n`);
    if (report.totals.rVes !== undefined) io.stdout.write(`R-VES ${report.totals.rVes.toFixed(2)}\n`);
    for (const w of report.totals.warnings) io.stderr.write(`WARNING: ${w}\n`);
    if (outPath) {
      try {
        writeFileSync(outPath, JSON.stringify(report, null, 1) + '\n');
      } catch (err) {
        io.stdout.write(JSON.stringify(report) + '\n');
        return fail(
          io,
          `cannot write --out ${outPath}: ${(err as Error).message}; the report was printed to stdout instead`,
        );
      }
    }
    return EXIT.ok;
  },
};
