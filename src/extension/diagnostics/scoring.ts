// Reading a trajectory file and scoring it for the diagnostics panel. Scoring is the core reward engine with the
// shared sandbox pool (SQL runs in worker processes, off the extension host's thread); a whole file is scored under a
// cancellable progress notification.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import type { Services } from '../services';
import { databaseResolver } from '../../app/trajectoryFiles';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import type { ResolvedPanel, ScoringResources } from '../../core/rewards/types';
import type { RunDiagnostics } from '../../core/rewards/report';
import type { TrajectoryDiagnostics } from '../../core/rewards/trajectoryReport';
import type { MismatchSql } from '../../core/rewards/mismatch';

export interface LoadedTrajectories {
  file: string;
  records: TrajectoryRecord[];
  byId: Map<string, TrajectoryRecord>;
  /** Lines that are not valid records (and an unfinished last line), in words. */
  invalid: string[];
}

/** Throws with a person-readable message when the file cannot be read at all. */
export async function loadTrajectories(file: string): Promise<LoadedTrajectories> {
  const { openTrajectoryFile } = await import('../../app/trajectoryFiles');
  const opened = await openTrajectoryFile(file);
  const invalid = opened.invalid.map((e) => e.message);
  if (opened.truncated) invalid.push(`${opened.truncated}; ignored`);
  return { file, records: opened.records, byId: opened.byId, invalid };
}

/** Where a record's database is (src/app/trajectoryFiles.ts: relative paths against the trajectory file's folder). */
function dbPathOf(file: string): (r: TrajectoryRecord) => string {
  return databaseResolver(file);
}

export async function loadPanelChoice(value: string, services: Services): Promise<ResolvedPanel> {
  const { loadPanel } = await import('../../core/rewards/panelFile');
  return loadPanel(value, services.workspaceDir() ?? process.cwd());
}

export async function newResources(services: Services): Promise<ScoringResources> {
  const [{ createScoringResources }, pool] = await Promise.all([
    import('../../core/rewards/resources'),
    services.pool(),
  ]);
  return createScoringResources({ run: pool, timeoutMs: services.settings().query.timeoutMs });
}

export class Cancelled extends Error {
  constructor() {
    super('scoring was cancelled');
    this.name = 'Cancelled';
  }
}

/** The records that can be scored (no gold: scoring skips them; or a gold whose database exists); the others' ids. */
function presentRecords(loaded: LoadedTrajectories): { present: TrajectoryRecord[]; missing: Set<string> } {
  const where = dbPathOf(loaded.file);
  const missing = new Set<string>();
  const present = loaded.records.filter((r) => {
    if (!r.task.gold) return true;
    if (existsSync(where(r))) return true;
    missing.add(r.id);
    return false;
  });
  return { present, missing };
}

/**
 * Scores every record with a gold under a cancellable progress notification; records whose database is missing are
 * skipped with that reason instead of failing as "gold-error".
 */
export async function scoreFile(
  loaded: LoadedTrajectories,
  panel: ResolvedPanel,
  resources: ScoringResources,
  onBusy: (text: string) => void,
  mismatchSql: MismatchSql = 'final',
): Promise<RunDiagnostics> {
  const [{ scoreRun }, { runDiagnostics }] = await Promise.all([
    import('../../core/rewards/scoreRun'),
    import('../../core/rewards/report'),
  ]);
  const where = dbPathOf(loaded.file);
  const { present, missing } = presentRecords(loaded);
  const name = vscode.workspace.asRelativePath(loaded.file);
  return vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Quarry: scoring ${name} with ${panel.name}`,
      cancellable: true,
    },
    async (progress, token) => {
      const ac = new AbortController();
      const sub = token.onCancellationRequested(() => ac.abort(new Cancelled()));
      try {
        const total = present.filter((r) => r.task.gold).length;
        let last = 0;
        onBusy(`Scoring ${total} trajectories with ${panel.name}…`);
        const report = await scoreRun(present, panel, {
          resources,
          dbPathOf: where,
          signal: ac.signal,
          mismatchSql,
          onProgress: (done, n) => {
            // Report in whole percents: thousands of tiny increments only flood the notification.
            const pct = Math.floor((100 * done) / Math.max(1, n));
            if (pct > last || done === n) {
              progress.report({ increment: pct - last, message: `${done} / ${n}` });
              last = pct;
              onBusy(`Scoring: ${done} / ${n} trajectories with ${panel.name}…`);
            }
          },
        });
        for (const id of missing)
          report.skipped.push({ id, reason: `database not found: ${where(loaded.byId.get(id)!)}` });
        return runDiagnostics(report, present, resources, { dbPathOf: where });
      } finally {
        sub.dispose();
      }
    },
  );
}

/**
 * The run's ODT mismatch report (and each item's tags) recomputed over another SQL of each trajectory: no SQL runs,
 * only the ODT comparisons, so the scored rewards are kept.
 */
export async function withMismatchSql(
  loaded: LoadedTrajectories,
  run: RunDiagnostics,
  resources: ScoringResources,
  sql: MismatchSql,
): Promise<RunDiagnostics> {
  const { recordsMismatch } = await import('../../core/rewards/mismatch');
  const { present } = presentRecords(loaded);
  const { report, outcomes } = recordsMismatch(present, resources, { dbPathOf: dbPathOf(loaded.file), sql });
  const tagsById = new Map<string, RunDiagnostics['items'][number]['odtTags']>();
  for (const [record, o] of outcomes) {
    if (!tagsById.has(record.id)) tagsById.set(record.id, o.status === 'compared' ? o.tags : null);
  }
  return { ...run, mismatch: report, items: run.items.map((it) => ({ ...it, odtTags: tagsById.get(it.id) ?? null })) };
}

export async function scoreOne(
  loaded: LoadedTrajectories,
  id: string,
  panel: ResolvedPanel,
  resources: ScoringResources,
): Promise<TrajectoryDiagnostics> {
  const record = loaded.byId.get(id);
  if (!record) throw new Error(`no trajectory with id ${JSON.stringify(id)} in ${loaded.file}`);
  const db = dbPathOf(loaded.file)(record);
  if (record.task.gold && !existsSync(db)) throw new Error(`trajectory ${id}: database not found: ${db}`);
  const { trajectoryDiagnostics } = await import('../../core/rewards/trajectoryReport');
  return trajectoryDiagnostics(record, panel, resources, { dbPath: db });
}
