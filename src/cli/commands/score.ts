// `quarry score`: every trajectory of a file scored with a panel; integrity flags, GRPO group statistics and
// Progress-SQL's mismatch rates for the run.
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { writeFileSync, existsSync, statSync } from 'node:fs';
import type { Command } from '../command';
import { UsageError, EXIT } from '../command';
import { createSqlPool } from '../../core/db';
import type { TrajectoryRecord } from '../../core/trajectories';
import { databaseResolver, openTrajectoryFile } from '../../app/trajectoryFiles';
import { createScoringResources, integrityFlags, DEFAULT_REWARD_TIMEOUT_MS } from '../../core/rewards';
import { runInput, scoreRun, type RunReport } from '../../core/rewards/scoreRun';
import { inputSuite } from '../../core/rewards/engine';
import { fmt, panelJson } from '../../core/rewards/render';
import { formatMismatch, isMismatchSql, MISMATCH_SQLS } from '../../core/rewards/mismatch';
import { scoringOptions, testSuiteOption, usage as asUsageError } from './scoringOptions';

const usage = `Usage: quarry score --trajectories FILE.jsonl --panel P|panel.json [--db-dir DIR] [--out FILE.jsonl]
                    [--mode spider|bird|omnisql] [--timeout-ms ${DEFAULT_REWARD_TIMEOUT_MS}]
                    [--mismatch-sql final|first] [--json] [--test-suite TSDIR]

Scores every trajectory of a file with a reward panel (gold = each record's task.gold).
Prints a summary per term, the integrity flags (empty-gold wins, failing gold, format failures by kind, suspicious
wins, zero-variance groups), GRPO group statistics when samples share a question (groupId), and Progress-SQL's
Table 8 ODT mismatch rates (SELECT/JOIN/WHERE/GROUP and per tag; greedy trajectories also apart).
  --db-dir  databases as DIR/<db_id>/<db_id>.sqlite (Spider layout) instead of each record's task.db.path
            (a relative task.db.path is read from the trajectory file's folder)
  --out     one JSON line per trajectory: {"id", "groupId", "sample", "panel", "total", "terms", "exec", "advantage"}
            ("exec" gains "testSuite": {databases, singleCorrect, disagreed} with --test-suite)
  --mismatch-sql  which SQL of each trajectory the mismatch rates compare: final (default) or first (a multi-turn
            rollout's Round 1 answer, written before any feedback)
  --json    print the summary as one JSON object instead of text
  --test-suite  TSDIR from quarry testsuite build: execution terms count an answer right only if it matches the gold
            on every TSDIR/<db_id>/*.sqlite too (db_id: task.db.id, else the database file's name); the integrity
            flags then say how many rewards of 1 on the single database the suite takes back, and which
Exit 0 when scored, 2 on bad input (unreadable file, invalid record, unknown panel, missing database).`;

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

function listIds(ids: readonly string[], max = 8): string {
  return ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')} … (+${ids.length - max})`;
}

function renderReport(r: RunReport, source: string): string {
  const out: string[] = [];
  out.push(`scored ${r.scored.length} trajectories with panel ${r.panel}${source ? ` (${source})` : ''}`);
  if (r.skipped.length)
    out.push(
      `skipped ${r.skipped.length}: ${listIds(
        r.skipped.map((s) => `${s.id} (${s.reason})`),
        5,
      )}`,
    );
  out.push(`total: mean ${fmt(r.total.mean)}, min ${fmt(r.total.min)}, max ${fmt(r.total.max)}`);
  const head = ['term', 'weight', 'mean value', 'mean contribution', 'min', 'max', 'nonzero'];
  const rows = r.terms.map((t) => [
    t.name,
    fmt(t.weight),
    fmt(t.meanValue),
    fmt(t.meanContribution),
    fmt(t.min),
    fmt(t.max),
    pct(t.nonzero),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  for (const row of [head, ...rows])
    out.push('  ' + row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  const ts = r.integrity.testSuite;
  if (ts)
    out.push(
      `test suite: ${ts.checked} answers checked over it; it takes back ${ts.count} of ${ts.singlePositives} ` +
        `rewards of 1 on the single database`,
    );
  const flags = integrityFlags(r.integrity);
  out.push(`integrity: ${flags.length === 0 ? 'no flags' : `${flags.length} flag(s)`}`);
  for (const f of flags) out.push(`  ${f}`);
  const g = r.groups;
  if (g) {
    const sizes = [...new Set(g.groups.map((x) => x.size))].sort((a, b) => a - b).join('/');
    out.push(
      `groups: ${g.groups.length} questions with ${sizes} samples; zero reward variance ` +
        `in ${g.zeroVariance.length}${g.zeroVariance.length ? ` (${listIds(g.zeroVariance)})` : ''}`,
    );
    const passes = g.groups.map((x) => x.pass);
    out.push(
      `  mean pass@G ${fmt(passes.reduce((a, b) => a + b, 0) / passes.length)}; solved by all ` +
        `samples: ${g.groups.filter((x) => x.pass === 1).length}, by ` +
        `none: ${g.groups.filter((x) => x.pass === 0).length}`,
    );
    const solvable = g.ranking.filter((q) => q.score < 1);
    out.push(
      `  hard but solvable (SQL-Trail S(q) ascending): ${
        solvable.length === 0
          ? 'none'
          : solvable
              .slice(0, 8)
              .map((q) => `${q.id} ${q.correct}/${q.total}`)
              .join(', ')
      }${solvable.length > 8 ? ` … (+${solvable.length - 8})` : ''}`,
    );
    out.push(
      `  MTIR-SQL filter (F = format reward ±0.1, τ = 0): keeps ${g.mtirFilter.kept} ` +
        `of ${g.mtirFilter.kept + g.mtirFilter.dropped.length}` +
        `${g.mtirFilter.dropped.length ? `; drops ${listIds(g.mtirFilter.dropped)}` : ''}`,
    );
  }
  out.push(...formatMismatch(r.mismatch));
  return out.join('\n');
}

function reportJson(r: RunReport) {
  return {
    panel: r.panel,
    scored: r.scored.length,
    skipped: r.skipped,
    total: r.total,
    terms: r.terms,
    integrity: { ...r.integrity, flags: integrityFlags(r.integrity) },
    groups: r.groups,
    mismatch: r.mismatch,
  };
}

export const scoreCommand: Command = {
  name: 'score',
  summary: 'Score a trajectory file with a reward panel: per-term summary, integrity flags, group statistics',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        trajectories: { type: 'string' },
        panel: { type: 'string' },
        'db-dir': { type: 'string' },
        out: { type: 'string' },
        mode: { type: 'string' },
        'timeout-ms': { type: 'string' },
        'mismatch-sql': { type: 'string' },
        json: { type: 'boolean' },
        'test-suite': { type: 'string' },
      },
    });
    if (!values.trajectories) throw new UsageError('--trajectories FILE.jsonl is required');
    if (!values.panel) throw new UsageError('--panel P|panel.json is required');
    const { panel, mode, timeoutMs } = scoringOptions({ ...values, panel: values.panel }, io.cwd);
    const mismatchSql = values['mismatch-sql'] ?? 'final';
    if (!isMismatchSql(mismatchSql)) {
      throw new UsageError(`--mismatch-sql must be one of ${MISMATCH_SQLS.join(', ')}, got '${mismatchSql}'`);
    }
    const dbDir = values['db-dir'] === undefined ? undefined : resolve(io.cwd, values['db-dir']);
    if (dbDir !== undefined && (!existsSync(dbDir) || !statSync(dbDir).isDirectory()))
      throw new UsageError(`--db-dir ${dbDir} is not a directory`);

    const path = resolve(io.cwd, values.trajectories);
    let records: TrajectoryRecord[];
    try {
      const opened = await openTrajectoryFile(path, { onInvalid: 'throw' });
      records = opened.records;
      if (opened.truncated)
        io.stderr.write(`quarry score: warning: ${path}: ${opened.truncated} (a writer was killed?); it is ignored\n`);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const dbPathOf = databaseResolver(path, { dbDir });
    const missing = [...new Set(records.filter((r) => r.task.gold).map(dbPathOf))].filter((p) => !existsSync(p));
    if (missing.length)
      throw new UsageError(
        `database file(s) not ` +
          `found: ${listIds(missing, 3)}${dbDir ? '' : ' (use --db-dir DIR for Spider-layout databases)'}`,
      );

    const testSuite = testSuiteOption(values['test-suite'], io.cwd);
    // A panel that requires a suite it cannot have (none given, a database without a folder) is refused up front.
    const runOpts = { mode, dbPathOf, mismatchSql, testSuite };
    for (const r of records) if (r.task.gold) asUsageError(() => inputSuite(panel, runInput(r, panel, runOpts)));

    const pool = createSqlPool({ spares: 0 });
    try {
      const resources = createScoringResources({ run: pool, timeoutMs });
      const report = await scoreRun(records, panel, { ...runOpts, resources });
      if (values.out) {
        const lines = report.scored.map((s) =>
          JSON.stringify({
            id: s.id,
            groupId: s.groupId,
            sample: s.sample,
            ...panelJson(s.result),
            exec: {
              correct: s.verdict.correct,
              reason: s.verdict.reason,
              ...(s.verdict.suite ? { testSuite: s.verdict.suite } : {}),
            },
            advantage: s.advantage,
          }),
        );
        writeFileSync(resolve(io.cwd, values.out), lines.map((l) => l + '\n').join(''));
      }
      for (const s of report.skipped) io.stderr.write(`quarry score: skipped ${s.id}: ${s.reason}\n`);
      io.stdout.write((values.json ? JSON.stringify(reportJson(report)) : renderReport(report, panel.source)) + '\n');
      return EXIT.ok;
    } finally {
      await pool.close();
    }
  },
};
