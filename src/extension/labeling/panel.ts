// The labeling panel's host side: holds the queue (one trajectory file in review order), reads and writes the label
// store, runs corrected SQL in the sandbox pool (the match verdict on the whole result, then its rows a page at a time
// through a GridSession, as every result grid), and answers the app's messages, checked by the panel kit
// (./registration.ts). One panel at a time.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { Services } from '../services';
import { databaseResolver } from '../../app/trajectoryFiles';
import { PanelController, registerPanel } from '../webviews/kit';
import type { LabelRestore, Parsed } from '../../protocol/restore';
import { GridSession } from '../results/gridSession';
import {
  labelMessageProblem,
  type QueueFilter,
  type QueueInfo,
  type RunOutcome,
  type ToApp,
  type ToHost,
} from '../../protocol/labeling';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import type { Label, LabelStore } from '../../core/labels/index';
import { LABELING } from './registration';

/** The label store a panel or an export uses; opened once per path and closed on deactivate. */
export type StoreProvider = () => Promise<LabelStore>;

interface Loaded {
  file: string;
  records: TrajectoryRecord[];
  ids: string[];
  problems: string[];
}

export class LabelPanel {
  static current: LabelPanel | undefined;

  private loaded: Loaded | null = null;
  private filter: QueueFilter = 'unlabeled-first';
  private queue: number[] = [];
  private position = 0;
  private pendingId: string | null = null;
  private work: Promise<unknown> = Promise.resolve();
  private readonly runs = new Set<AbortController>();
  /** The paged grid over the newest run's whole result (the app shows only its latest run). */
  private grid: { order: number; seq: number; id: string; session: GridSession } | null = null;
  /** Runs started, counted here (the app's seq starts again when its webview reloads). */
  private runsStarted = 0;
  /** The newest run's outcome, sent again when the webview reloads on that trajectory (hidden and shown again). */
  private lastRun: { order: number; seq: number; id: string; outcome: RunOutcome } | null = null;

  private constructor(
    private readonly panel: PanelController<ToHost, ToApp>,
    private readonly services: Services,
    private readonly store: StoreProvider,
  ) {
    LabelPanel.current = this;
    panel.bind({
      problem: (m) => labelMessageProblem(m) ?? (m.type === 'grid' ? this.gridProblem(m) : null),
      receive: (m) => this.receive(m),
      onDispose: () => this.dispose(),
    });
  }

  static show(context: vscode.ExtensionContext, services: Services, store: StoreProvider): LabelPanel {
    const cur = LabelPanel.current;
    if (cur && !cur.panel.disposed) {
      cur.panel.reveal();
      return cur;
    }
    return new LabelPanel(PanelController.create(context, services, LABELING), services, store);
  }

  /**
   * Registers the panel with the kit: after a window reload it comes back with the state its app saved (checked by
   * labelRestore), on the same file and queue filter, on the trajectory under review (the app keeps unsaved edits
   * itself); an unusable state leaves it empty, saying why. `quarry.labeling.testHook` adds `idle` (every message
   * handled so far is done), `storePath` and `labels` (everything in the label store).
   */
  static register(
    context: vscode.ExtensionContext,
    services: Services,
    store: StoreProvider,
    storePath: () => string,
  ): void {
    const current = () => {
      if (!LabelPanel.current) throw new Error('the labeling panel is not open');
      return LabelPanel.current;
    };
    const revive = async (panel: vscode.WebviewPanel, saved: Parsed<LabelRestore>) =>
      LabelPanel.revive(context, services, store, panel, saved);
    registerPanel(context, services, LABELING, revive, {
      idle: () =>
        current()
          .idle()
          .then(() => true),
      storePath,
      labels: async () => (await store()).all(),
    });
  }

  private static revive(
    context: vscode.ExtensionContext,
    services: Services,
    store: StoreProvider,
    panel: vscode.WebviewPanel,
    saved: Parsed<LabelRestore>,
  ): string | null {
    const view = PanelController.adopt<ToHost, ToApp>(context, services, LABELING, panel);
    const revived = new LabelPanel(view, services, store);
    if (!saved.ok) {
      revived.post({ type: 'error', message: `The queue could not come back after the reload: ${saved.error}` });
      return saved.error;
    }
    const { file, id, filter } = saved.value;
    if (filter !== null) revived.filter = filter;
    if (file !== null) void revived.open(file, id ?? undefined);
    return null;
  }

  get file(): string | null {
    return this.loaded?.file ?? null;
  }

  /** Resolves when every message handled so far is done (tests wait on it). */
  idle(): Promise<void> {
    return this.work.then(
      () => undefined,
      () => undefined,
    );
  }

  private dispose(): void {
    for (const c of this.runs) c.abort();
    if (LabelPanel.current === this) LabelPanel.current = undefined;
  }

  private post(message: ToApp): void {
    this.panel.post(message);
  }

  private fail(message: string, err?: unknown): void {
    this.services.log.error(`labeling: ${message}`, err);
    this.post({ type: 'error', message });
  }

  /** Reads `file` into the queue (unlabeled first) and shows trajectory `id` if given, else the first in the queue. */
  open(file: string, id?: string): Promise<void> {
    return this.enqueue(() => this.load(file, id ?? null));
  }

  private enqueue<T>(f: () => Promise<T>): Promise<T> {
    const next = this.work.then(f, f);
    this.work = next.catch(() => undefined);
    return next;
  }

  private async load(file: string, id: string | null): Promise<void> {
    this.panel.title = `Labeling: ${basename(file)}`;
    this.post({ type: 'loading', file });
    try {
      const { openTrajectoryFile } = await import('../../app/trajectoryFiles');
      const read = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Quarry: reading trajectories' },
        () => openTrajectoryFile(file),
      );
      const problems = read.invalid.slice(0, 10).map((e) => e.message);
      if (read.invalid.length > 10) problems.push(`… and ${read.invalid.length - 10} more bad lines`);
      if (read.truncated) problems.push(`${read.truncated}; it is left out`);
      this.loaded = { file, records: read.records, ids: read.records.map((r) => r.id), problems };
      this.services.log.info(
        `labeling: ${file}: ${read.records.length} trajectories, ${read.invalid.length} bad line(s)`,
      );
    } catch (err) {
      this.loaded = null;
      this.fail((err as Error).message, err);
      return;
    }
    this.pendingId = id;
    await this.sendTags();
    await this.rebuildQueue();
  }

  private async labelsOf(ids: readonly string[]): Promise<Map<string, Label>> {
    return (await this.store()).getMany(ids);
  }

  /**
   * Recomputes the order (on open and on a filter change) and shows the wanted item. A trajectory asked for by
   * open() that the filter hides switches the filter to all; on a filter change the reviewer's choice stands.
   */
  private async rebuildQueue(filterChanged = false): Promise<void> {
    const l = this.loaded;
    if (!l) return;
    const { orderQueue } = await import('../../core/labels/queue');
    let labels: Map<string, Label>;
    try {
      labels = await this.labelsOf(l.ids);
    } catch (err) {
      this.fail(`cannot read the label store: ${(err as Error).message}`, err);
      return;
    }
    this.queue = orderQueue(l.ids, labels, this.filter);
    const wanted = this.pendingId;
    this.pendingId = null;
    let position = 0;
    if (wanted !== null) {
      let at = this.queue.findIndex((i) => l.ids[i] === wanted);
      if (at < 0 && !filterChanged && l.ids.includes(wanted)) {
        // Asked for a trajectory the filter hides: show the whole file rather than a different one.
        this.filter = 'all';
        this.queue = orderQueue(l.ids, labels, 'all');
        at = this.queue.findIndex((i) => l.ids[i] === wanted);
      }
      if (at < 0 && !filterChanged) this.services.log.warn(`labeling: trajectory ${wanted} is not in ${l.file}`);
      position = Math.max(0, at);
    }
    this.post({ type: 'queue', queue: this.queueInfo(labels) });
    await this.show(position, labels);
  }

  private queueInfo(labels: Map<string, Label>): QueueInfo {
    const l = this.loaded!;
    let labeled = 0;
    for (const lab of labels.values()) if (lab.verdict !== null) labeled++;
    return {
      file: l.file,
      fileLabel: basename(l.file),
      filter: this.filter,
      size: this.queue.length,
      total: l.ids.length,
      labeled,
      problems: l.problems,
    };
  }

  private async show(position: number, labels?: Map<string, Label>): Promise<void> {
    const l = this.loaded;
    if (!l) return;
    if (this.queue.length === 0) {
      this.post({
        type: 'empty',
        reason: l.ids.length === 0 ? `${basename(l.file)} holds no trajectories` : 'no trajectory matches this filter',
      });
      return;
    }
    this.position = Math.min(Math.max(0, position), this.queue.length - 1);
    const record = l.records[this.queue[this.position]];
    const label = labels
      ? (labels.get(record.id) ?? null)
      : ((await this.labelsOf([record.id])).get(record.id) ?? null);
    const { recordSha } = await import('../../core/labels/recordSha');
    this.post({
      type: 'item',
      position: this.position,
      record,
      label,
      changed: label !== null && label.recordSha !== recordSha(record),
    });
  }

  private async sendTags(): Promise<void> {
    try {
      this.post({ type: 'tags', tags: (await this.store()).tags() });
    } catch (err) {
      this.fail(`cannot open the label store: ${(err as Error).message}`, err);
    }
  }

  /** Every message from the webview comes through here, checked by the kit (LABEL_RULES, labelMessageProblem). */
  private receive(m: ToHost): Promise<void> {
    // `run` and the grid's pages are not queued: a slow query or export must not hold up moving on or saving.
    if (m.type === 'run') return this.run(m);
    if (m.type === 'grid') return this.gridMessage(m);
    return this.enqueue(() => this.handle(m));
  }

  /** Why a message of the grid of run `seq` is refused: an older run's grid is gone. */
  private gridProblem(m: Extract<ToHost, { type: 'grid' }>): string | null {
    const g = this.grid;
    return g && g.seq === m.seq && g.id === m.id ? null : `grid: run ${m.seq} of ${m.id} is not the newest result`;
  }

  /** A page, export or copy asked for by the newest run's grid. */
  private async gridMessage(m: Extract<ToHost, { type: 'grid' }>): Promise<void> {
    const g = this.grid!;
    try {
      await g.session.receive(m.message);
    } catch (err) {
      this.fail(`the result grid failed: ${(err as Error).message}`, err);
    }
  }

  private async handle(m: Exclude<ToHost, { type: 'run' | 'grid' }>): Promise<void> {
    switch (m.type) {
      case 'ready': {
        if (!this.loaded) return;
        await this.sendTags();
        const labels = await this.labelsOf(this.loaded.ids).catch(() => new Map<string, Label>());
        this.post({ type: 'queue', queue: this.queueInfo(labels) });
        // The app remembers where it was; the same trajectory wins over the same position (the queue is fixed).
        const byId = m.id !== undefined ? this.queue.findIndex((i) => this.loaded!.ids[i] === m.id) : -1;
        await this.show(byId >= 0 ? byId : (m.position ?? this.position), labels);
        // A webview that reloaded (hidden, then shown) gets the newest run of its trajectory back, grid and all.
        const last = this.lastRun;
        if (last && this.queue.length > 0 && this.loaded.ids[this.queue[this.position]] === last.id) {
          this.post({ type: 'runResult', seq: last.seq, id: last.id, outcome: last.outcome, restored: true });
        }
        return;
      }
      case 'go':
        return this.show(m.position);
      case 'setFilter':
        this.filter = m.filter as QueueFilter;
        this.pendingId = this.currentId();
        return this.rebuildQueue(true);
      case 'save':
        return this.save(m);
      case 'addTag': {
        try {
          (await this.store()).addTag(m.name);
        } catch (err) {
          this.fail((err as Error).message, err);
          return;
        }
        return this.sendTags();
      }
      case 'openReplay': {
        const file = this.loaded?.file;
        if (file) await vscode.commands.executeCommand('quarry.openReplay', { file, id: m.id });
        return;
      }
      case 'exportSft':
        await vscode.commands.executeCommand('quarry.exportSft');
        return;
      case 'exportRl':
        await vscode.commands.executeCommand('quarry.exportRlPrompts', this.loaded?.file);
        return;
    }
  }

  private currentId(): string | null {
    const l = this.loaded;
    if (!l || this.queue.length === 0) return null;
    return l.ids[this.queue[this.position]] ?? null;
  }

  private recordById(id: string): TrajectoryRecord | undefined {
    const l = this.loaded;
    if (!l) return undefined;
    const i = l.ids.indexOf(id);
    return i >= 0 ? l.records[i] : undefined;
  }

  /** One transaction in the store; the app hears `saved` only after it committed. */
  private async save(m: Extract<ToHost, { type: 'save' }>): Promise<void> {
    const record = this.recordById(m.id);
    if (!record || !this.loaded) {
      this.post({ type: 'saveFailed', seq: m.seq, id: m.id, message: `trajectory ${m.id} is not in the open file` });
      return;
    }
    try {
      const store = await this.store();
      const { recordSha } = await import('../../core/labels/recordSha');
      const label = store.save({
        trajectoryId: record.id,
        file: this.loaded.file,
        recordSha: recordSha(record),
        verdict: m.verdict === '' ? null : (m.verdict as Label['verdict']),
        correctedSql: m.correctedSql,
        tags: m.tags,
        note: m.note,
      });
      const counts = store.counts(this.loaded.ids);
      this.post({ type: 'saved', seq: m.seq, id: m.id, label, labeled: counts.labeled, total: this.loaded.ids.length });
      if (label.tags.length > 0) await this.sendTags();
    } catch (err) {
      const message = (err as Error).message;
      this.services.log.error(`labeling: saving the label of ${m.id} failed`, err);
      this.post({ type: 'saveFailed', seq: m.seq, id: m.id, message });
    }
  }

  /**
   * The record's database, by the one rule of src/app/trajectoryFiles.ts (relative to the trajectory file's folder).
   */
  private dbPathOf(record: TrajectoryRecord): string {
    return databaseResolver(this.loaded?.file ?? '.')(record);
  }

  /**
   * Runs the corrected SQL in the sandbox and compares it (gold, else the final SQL) with the evaluator's comparator.
   */
  private async run(m: Extract<ToHost, { type: 'run' }>): Promise<void> {
    const record = this.recordById(m.id);
    if (!record) {
      this.post({ type: 'runFailed', seq: m.seq, id: m.id, message: `trajectory ${m.id} is not in the open file` });
      return;
    }
    const dbPath = this.dbPathOf(record);
    if (!existsSync(dbPath)) {
      this.post({
        type: 'runFailed',
        seq: m.seq,
        id: m.id,
        message: `database not found: ${dbPath} (the trajectory was recorded against it)`,
      });
      return;
    }
    const abort = new AbortController();
    this.runs.add(abort);
    const order = ++this.runsStarted;
    try {
      const [pool, { checkCorrectedSql }] = await Promise.all([
        this.services.pool(),
        import('../../core/labels/checkSql'),
      ]);
      const timeoutMs = this.services.settings().query.timeoutMs;
      const check = await checkCorrectedSql({
        sql: m.sql,
        dbPath,
        gold: record.task.gold,
        finalSql: record.finalSql,
        timeoutMs,
        run: (req) => pool.exec(req, abort.signal),
      });
      const r = check.result;
      const outcome: RunOutcome = {
        columns: r?.columns ?? [],
        rowCount: r?.rowCount ?? 0,
        error: r && !r.ok ? r.error : null,
        against: check.against,
        match: check.match,
        reason: check.reason,
        detail: check.detail,
        ms: r?.ms ?? 0,
      };
      // The rows: the app's grid asks for its pages (of the whole result, sorted and filtered in SQLite). Runs are
      // not queued, so an older run finishing last does not take the grid from a newer one.
      if (r?.ok && (!this.grid || this.grid.order < order)) {
        const { seq, id } = m;
        const session: GridSession = new GridSession(
          this.services,
          { db: dbPath, sql: m.sql, timeoutMs },
          (message) => {
            if (this.grid?.session === session) this.post({ type: 'grid', seq, id, message });
          },
          `${id.replace(/[^\w.-]+/g, '_')}-corrected`,
        );
        this.grid = { order, seq, id, session };
      }
      if (!this.lastRun || this.lastRun.order < order) this.lastRun = { order, seq: m.seq, id: m.id, outcome };
      this.post({ type: 'runResult', seq: m.seq, id: m.id, outcome });
    } catch (err) {
      if (abort.signal.aborted) return;
      const message = (err as Error).message;
      this.services.log.error(`labeling: running the corrected SQL of ${m.id} failed`, err);
      this.post({ type: 'runFailed', seq: m.seq, id: m.id, message });
    } finally {
      this.runs.delete(abort);
    }
  }
}
