// `quarry reward`: one prediction or trajectory scored with a reward panel, every term explained.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { createSqlPool } from '../../core/db';
import { assertSqliteFile } from '../../core/db/open';
import { positiveInt } from '../../core/db/execOptions';
import { evalMode } from '../../core/eval/modes';
import { readTrajectories, type TrajectoryRecord } from '../../core/trajectories';
import {
  scorePanelDetailed,
  createScoringResources,
  parseDifficulty,
  DEFAULT_REWARD_TIMEOUT_MS,
  type Difficulty,
} from '../../core/rewards';
import { panelJson, panelTable } from '../../core/rewards/render';
import { scoringOptions, testSuiteOption, usage as asUsageError } from './scoringOptions';
import { inputSuite } from '../../core/rewards/engine';
import { BUILTIN_PANEL_NAMES } from '../../core/rewards/builtins';

const usage =
  `Usage: quarry reward --panel P --gold-sql SQL --db FILE ` +
  `(--pred-sql SQL | --trajectory FILE.jsonl [--index N])
                     [--difficulty simple|medium|hard|extra] [--json] [--mode spider|bird|omnisql] [--turn-budget T]
                     [--timeout-ms ${DEFAULT_REWARD_TIMEOUT_MS}] [--test-suite TSDIR]

Scores one prediction with a reward panel and explains every term.
  --panel        built-in panel (${BUILTIN_PANEL_NAMES.join(', ')}) or a panel .json file (docs/rewards.md)
  --pred-sql     a bare predicted SQL. There is no model output to judge, so format terms count it as well-formed
                 (skyrl scores a wrong bare SQL 0, never the −1 of a malformed response) and turn terms count one turn:
                 to score what a model wrote, give its episode with --trajectory.
  --trajectory   a trajectory JSONL file, record --index N (0-based, default 0): every term judges the whole episode.
                 With a trajectory, --gold-sql and --db default to the record's task.gold and task.db.path.
  --difficulty   SQL-Trail's r_turns level (easy is accepted as simple); default the trajectory's, else the Spider
                 hardness of the gold query
  --mode         result comparison of the evaluator; default the panel's own (its paper's evaluator: skyrl bird,
                 progress omnisql, sqltrail/mtir/mtsqlr1 spider; a panel file's "mode")
  --turn-budget  T for hard/extra r_turns (default the trajectory's budget, else 10)
  --test-suite   TSDIR from quarry testsuite build: the execution terms count the answer right only if it matches the
                 gold on every TSDIR/<db_id>/*.sqlite too (db_id: the trajectory's task.db.id, else the --db file's
                 name); a panel file's "exec": {"testSuite": true} requires it, false turns it off
  --json         print {"panel", "total", "terms": [{"name", "value", "weight", "contribution", "explanation"}]}
Exit 0 when scored (a failing gold SQL is scored 0 and warned about), 2 on bad input.`;

async function pickTrajectory(path: string, indexText: string | undefined): Promise<TrajectoryRecord> {
  const { records, truncated } = await readTrajectories(path);
  const index = indexText === undefined ? 0 : Number(indexText);
  if (!Number.isInteger(index) || index < 0)
    throw new UsageError(`--index must be a whole number ≥ 0 (got '${indexText}')`);
  if (records.length === 0)
    throw new UsageError(
      `${path} holds no trajectory records${truncated ? ` (only an unfinished line ${truncated.line})` : ''}`,
    );
  if (index >= records.length)
    throw new UsageError(`--index ${index} is past the end: ${path} holds ${records.length} record(s)`);
  return records[index];
}

export const rewardCommand: Command = {
  name: 'reward',
  summary: 'Score one prediction or trajectory with a reward panel, every term explained',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        panel: { type: 'string' },
        'gold-sql': { type: 'string' },
        db: { type: 'string' },
        'pred-sql': { type: 'string' },
        trajectory: { type: 'string' },
        index: { type: 'string' },
        difficulty: { type: 'string' },
        json: { type: 'boolean' },
        mode: { type: 'string' },
        'turn-budget': { type: 'string' },
        'timeout-ms': { type: 'string' },
        'test-suite': { type: 'string' },
      },
    });
    if (!values.panel) throw new UsageError('--panel P is required');
    if ((values['pred-sql'] === undefined) === (values.trajectory === undefined))
      throw new UsageError('give exactly one of --pred-sql SQL and --trajectory FILE.jsonl');
    if (values.index !== undefined && values.trajectory === undefined)
      throw new UsageError('--index goes with --trajectory');
    let difficulty: Difficulty | undefined;
    if (values.difficulty !== undefined) {
      difficulty = parseDifficulty(values.difficulty);
      if (!difficulty)
        throw new UsageError(`--difficulty must be simple, medium, hard or extra (got '${values.difficulty}')`);
    }
    const { panel, mode, timeoutMs } = scoringOptions({ ...values, panel: values.panel }, io.cwd);
    const turnBudget =
      values['turn-budget'] === undefined
        ? undefined
        : asUsageError(() => positiveInt('turn-budget', values['turn-budget'], 10));

    let trajectory: TrajectoryRecord | null = null;
    if (values.trajectory !== undefined) {
      const path = resolve(io.cwd, values.trajectory);
      try {
        trajectory = await pickTrajectory(path, values.index);
      } catch (err) {
        if (err instanceof UsageError) throw err;
        const code = (err as NodeJS.ErrnoException).code;
        throw new UsageError(code === 'ENOENT' ? `cannot read ${path}: no such file` : (err as Error).message);
      }
    }
    const goldSql = values['gold-sql'] ?? trajectory?.task.gold ?? undefined;
    if (goldSql === undefined || goldSql === null)
      throw new UsageError('--gold-sql SQL is required (the trajectory records no gold)');
    const dbText = values.db ?? trajectory?.task.db.path;
    if (!dbText) throw new UsageError('--db FILE is required');
    const dbPath = resolve(io.cwd, dbText);
    try {
      assertSqliteFile(dbPath);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }

    const testSuite = testSuiteOption(values['test-suite'], io.cwd);
    const input = {
      goldSql,
      dbPath,
      trajectory,
      predSql: values['pred-sql'] ?? null,
      difficulty,
      mode,
      turnBudget,
      testSuite,
      dbId: trajectory?.task.db.id ?? undefined,
    };
    // A panel that requires a suite it cannot have is refused before anything runs.
    const suite = asUsageError(() => inputSuite(panel, input));
    if (testSuite && !suite && panel.testSuite !== 'off')
      io.stderr.write(
        `quarry reward: warning: the test suite has no folder for this database; scored on the database alone\n`,
      );

    const pool = createSqlPool({ size: 2, spares: 0 });
    try {
      const resources = createScoringResources({ run: pool, timeoutMs });
      const result = await scorePanelDetailed(panel, input, resources);
      // Cached: the panel's execution terms already ran the gold, so this costs nothing when they did.
      const gold = await resources.exec(dbPath, evalMode(mode).prepare(goldSql, '', {}).gold);
      if (!gold.ok)
        io.stderr.write(
          `quarry reward: warning: the gold SQL did not run (${gold.error}); execution terms are 0 ` +
            `through no fault of the prediction\n`,
        );
      else if (gold.rows.length === 0)
        io.stderr.write(
          'quarry reward: warning: the gold result is empty, so any prediction returning no rows matches it\n',
        );
      io.stdout.write(values.json ? JSON.stringify(panelJson(result)) + '\n' : panelTable(result, panel.source) + '\n');
      return EXIT.ok;
    } finally {
      await pool.close();
    }
  },
};
