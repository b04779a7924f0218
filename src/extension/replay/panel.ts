// The replay panel's host side: owns the open file's records and summaries, filters them, scores them lazily with the
// reward engine (verdict + panel total, cached per file), and sends the app summaries, filtered keys, and full
// records only when one is opened, compared or shown in its group. Built from the panel kit (./registration.ts).
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import type { Services } from '../services';
import { databaseResolver } from '../../app/trajectoryFiles';
import { PanelController } from '../webviews/kit';
import type { Parsed, ReplayRestore } from '../../protocol/restore';
import {
  packRows,
  sanitizeFilter,
  type Explanation,
  type GroupMember,
  type ScoreUpdate,
  type ToApp,
  type ToHost,
} from '../../protocol/replay';
import { facets, filterSummaries, groupKeys, type TrajectoryFilter } from '../../core/trajectories/summary';
import {
  AUTO_PANEL,
  createReplayScorer,
  groupStatistics,
  type ReplayScorer,
  type TrajectoryExplanation,
} from '../../core/trajectories/scoring';
import { diffSql } from '../../core/trajectories/compare';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { fileLabel, loadTrajectoryFile, type LabelLookup, type LoadedFile } from './source';
import { createScoringResources } from '../../core/rewards/resources';
import { BUILTIN_PANEL_NAMES } from '../../core/rewards/builtins';
import { ScoreCache, dbStamp } from './scoreCache';
import { scoreTally, type ScoreTally } from './scoreTally';
import { REPLAY } from './registration';

/**
 * Files up to this size are scored as soon as they open; larger ones when asked (Score all, a verdict/reward filter).
 */
export const AUTO_SCORE_LIMIT = 2000;
/** Scorings in flight at once: execution runs in the pool's two workers, the rest is parsing on this thread. */
const SCORE_CONCURRENCY = 4;
/** Score updates are batched so 10,000 verdicts do not become 10,000 messages. */
const FLUSH_MS = 250;

/** One scorer (and its cache) per file version, shared by panels reopening it; the few most recent are kept. */
const scorers = new Map<string, ReplayScorer>();
const MAX_SCORERS = 4;

/** Drops the in-memory scorers, as a new session starts without them (tests of the saved cache use it). */
export function forgetScorers(): void {
  scorers.clear();
}

function toExplanation(e: TrajectoryExplanation): Explanation {
  return {
    panel: e.panel,
    total: e.result.total,
    terms: e.result.terms,
    correct: e.verdict.correct,
    reason: e.verdict.reason,
    detail: e.verdict.detail ?? null,
  };
}

export class ReplayPanel {
  static current: ReplayPanel | undefined;
  static panelNames: string[] = ['auto', ...BUILTIN_PANEL_NAMES];

  private loaded: LoadedFile | null = null;
  private filter: TrajectoryFilter = {};
  private filterSeq = 0;
  private panelName = AUTO_PANEL;
  private scoring: { stop: boolean } | null = null;
  private scoringRun: Promise<void> = Promise.resolve();
  /** The trajectory to open once the list is there (from `open(file, id)`), and on which turn. */
  private pendingId: string | null = null;
  private pendingTurn: number | null = null;
  private openSeq = 0;

  private readonly cache: ScoreCache;

  private constructor(
    private readonly panel: PanelController<ToHost, ToApp>,
    context: vscode.ExtensionContext,
    private readonly services: Services,
    private readonly labels: LabelLookup | undefined,
  ) {
    ReplayPanel.current = this;
    this.cache = new ScoreCache(vscode.Uri.joinPath(context.globalStorageUri, 'replay-scores').fsPath);
    // Labels made in the labeling panel meanwhile show up when the replay comes back into view.
    panel.panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.visible) void this.refreshLabels();
    });
    panel.bind({
      receive: (m) => this.receive(m),
      // The app also hears of each message the kit refused, as an error in the panel.
      onRefused: (why) => this.post({ type: 'error', message: `ignored a malformed message (${why})` }),
      onDispose: () => this.dispose(),
    });
  }

  static show(context: vscode.ExtensionContext, services: Services, labels?: LabelLookup): ReplayPanel {
    const cur = ReplayPanel.current;
    if (cur && !cur.panel.disposed) {
      cur.panel.reveal();
      return cur;
    }
    return new ReplayPanel(PanelController.create(context, services, REPLAY), context, services, labels);
  }

  /**
   * The panel VS Code brings back after a window reload, with the state its app saved (checked by the kit): the file
   * is read again and the trajectory that was open comes back on the same turn (the app restores its filter, marks
   * and view itself). Returns why the state was not used (the panel then opens empty), or null.
   */
  static revive(
    panel: vscode.WebviewPanel,
    context: vscode.ExtensionContext,
    services: Services,
    labels: LabelLookup | undefined,
    saved: Parsed<ReplayRestore>,
  ): string | null {
    const view = PanelController.adopt<ToHost, ToApp>(context, services, REPLAY, panel);
    const revived = new ReplayPanel(view, context, services, labels);
    if (!saved.ok) {
      revived.post({ type: 'error', message: `the panel could not come back after the reload: ${saved.error}` });
      return saved.error;
    }
    const { file, selectedId, turn } = saved.value;
    if (file !== null) void revived.open(file, selectedId ?? undefined, turn);
    return null;
  }

  get file(): string | null {
    return this.loaded?.file ?? null;
  }

  private dispose(): void {
    if (this.scoring) this.scoring.stop = true;
    if (ReplayPanel.current === this) ReplayPanel.current = undefined;
  }

  private post(message: ToApp): void {
    this.panel.post(message);
  }

  /** Reads `file` and shows trajectories `a` and `b` of it side by side in the compare view. */
  async openCompare(file: string, a: string, b: string): Promise<void> {
    await this.open(file);
    const l = this.loaded;
    const ka = l?.byId.get(a);
    const kb = l?.byId.get(b);
    if (ka === undefined || kb === undefined) {
      this.post({ type: 'error', message: `trajectories ${a} and ${b} are not both in ${file}` });
      return;
    }
    this.sendCompare(ka, kb, true);
  }

  /** Reads `file` (replacing the list) and optionally opens trajectory `id` in it (on `turn`, else the first). */
  async open(file: string, id?: string, turn?: number): Promise<void> {
    // Two opens in a row (a double click, the palette twice): only the last one's file is shown.
    const seq = ++this.openSeq;
    this.pendingId = id ?? null;
    this.pendingTurn = turn ?? null;
    if (this.scoring) this.scoring.stop = true;
    this.scoring = null;
    this.panel.title = `Replay: ${fileLabel(file)}`;
    this.post({ type: 'loading', file, label: fileLabel(file) });
    let loaded: LoadedFile;
    try {
      loaded = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: 'Quarry: reading trajectories' },
        () => loadTrajectoryFile(file, this.labels),
      );
    } catch (err) {
      if (seq !== this.openSeq) return;
      const message = (err as Error).message;
      this.services.log.error(`replay: ${message}`);
      this.post({ type: 'error', message });
      void vscode.window.showErrorMessage(`Quarry: ${message}`, 'Show Log').then((a) => {
        if (a) this.services.log.show();
      });
      return;
    }
    if (this.panel.disposed || seq !== this.openSeq) return;
    this.loaded = loaded;
    this.scorer(loaded);
    this.services.log.info(
      `replay: ${file}: ${loaded.records.length} trajectories, ${loaded.invalid.length} invalid line(s)`,
    );
    for (const bad of loaded.invalid.slice(0, 20)) this.services.log.warn(`replay: ${bad.message}`);
    this.sendList();
    if (loaded.records.length <= AUTO_SCORE_LIMIT) void this.scoreAll();
  }

  /** Rereads the labels of the open file; when any changed, the app gets the list again. */
  async refreshLabels(): Promise<void> {
    const l = this.loaded;
    if (!l || !this.labels) return;
    const labels = await this.labels(l.records).catch(() => null);
    if (!labels || this.loaded !== l) return;
    let changed = false;
    l.records.forEach((r, i) => {
      const next = labels.get(r.id) ?? null;
      if (l.summaries[i].label !== next) {
        l.summaries[i].label = next;
        changed = true;
      }
    });
    if (changed) this.sendList();
  }

  /** The whole list again (on open, and when the app reloads after being hidden). */
  private sendList(): void {
    const l = this.loaded;
    if (!l) return;
    this.applyCached();
    this.post({
      type: 'list',
      file: l.file,
      label: fileLabel(l.file),
      rows: packRows(l.summaries),
      invalid: l.invalid,
      truncated: l.truncated,
      panels: ReplayPanel.panelNames,
      panel: this.panelName,
    });
    this.sendView();
    if (l.records.length === 0)
      this.post({
        type: 'empty',
        message: l.invalid.length
          ? `No valid trajectories: ${l.invalid.length} invalid line(s)`
          : 'This file holds no trajectories.',
      });
    if (this.pendingId !== null) {
      const key = l.byId.get(this.pendingId);
      if (key === undefined)
        this.post({ type: 'error', message: `trajectory ${this.pendingId} is not in ${fileLabel(l.file)}` });
      else this.sendDetail(key, this.pendingTurn);
      this.pendingId = null;
      this.pendingTurn = null;
    }
    this.sendScoreState([]);
  }

  private sendView(): void {
    const l = this.loaded;
    if (!l) return;
    const keys = filterSummaries(l.summaries, this.filter, l.haystacks);
    this.post({ type: 'view', seq: this.filterSeq, keys, total: l.summaries.length, facets: facets(l.summaries) });
  }

  /**
   * The file version's scorer, made on first use and seeded with the outcomes saved in an earlier session. It starts no
   * SQL worker until something actually has to run.
   */
  private scorer(l: LoadedFile): ReplayScorer {
    const hit = scorers.get(l.version);
    if (hit) return hit;
    const resources = createScoringResources({
      run: (req) => this.services.pool().then((pool) => pool.exec(req)),
      timeoutMs: this.services.settings().query.timeoutMs,
      maxExecEntries: 2000,
    });
    // A relative database path (a file moved between machines with its databases) is read beside the file.
    const dbPathOf = databaseResolver(l.file);
    const scorer = createReplayScorer({ resources, dbExists: existsSync, dbPathOf, dbStamp });
    const restored = scorer.restore(this.cache.load(l.version), l.records);
    if (restored)
      this.services.log.info(`replay: ${restored} verdicts/rewards of ${l.file} reused from an earlier session`);
    if (scorers.size >= MAX_SCORERS) scorers.delete(scorers.keys().next().value as string);
    scorers.set(l.version, scorer);
    return scorer;
  }

  private saveScores(l: LoadedFile): void {
    const scorer = scorers.get(l.version);
    if (!scorer) return;
    try {
      this.cache.save(l.version, scorer.snapshot());
    } catch (err) {
      this.services.log.warn(`replay: could not keep the scores of ${l.file}: ${(err as Error).message}`);
    }
  }

  /** Puts already-computed outcomes for the current panel into the summaries (after a reopen or a panel switch). */
  private applyCached(): ScoreUpdate[] {
    const l = this.loaded;
    const scorer = l ? scorers.get(l.version) : undefined;
    if (!l || !scorer) return [];
    const updates: ScoreUpdate[] = [];
    l.records.forEach((r, i) => {
      const o = scorer.cached(r, this.panelName);
      const s = l.summaries[i];
      s.reward = o?.status === 'scored' ? o.reward : null;
      if (o?.status === 'scored' && s.verdictSource !== 'stored') {
        s.verdict = o.correct ? 'correct' : 'incorrect';
        s.verdictSource = 'computed';
      }
      updates.push({ key: i, verdict: s.verdict, reward: s.reward, note: o?.status === 'skipped' ? o.reason : null });
    });
    return updates;
  }

  /** The current panel's outcomes so far: looked at, scored, and why the rest were skipped. */
  private tally(): ScoreTally {
    const l = this.loaded;
    const scorer = l ? scorers.get(l.version) : undefined;
    if (!l || !scorer) return { done: 0, scored: 0, unscored: null };
    return scoreTally(l.records.map((r) => scorer.cached(r, this.panelName)));
  }

  private sendScoreState(updates: ScoreUpdate[]): void {
    const total = this.loaded?.records.length ?? 0;
    const { done, scored, unscored } = this.tally();
    this.post({ type: 'scores', updates, done, total, running: this.scoring !== null, scored, unscored });
  }

  private filterUsesScores(): boolean {
    const f = this.filter;
    return (
      (f.verdict !== undefined && f.verdict !== 'any') ||
      typeof f.rewardMin === 'number' ||
      typeof f.rewardMax === 'number'
    );
  }

  /** Resolves when the scoring in progress (if any) has finished or stopped. */
  idle(): Promise<void> {
    return this.scoringRun;
  }

  /** Scores every record not scored yet for the current panel, in list order, posting batched updates. */
  scoreAll(): Promise<void> {
    if (!this.loaded || this.scoring || this.loaded.records.length === 0) return this.scoringRun;
    this.scoringRun = this.runScoring(this.loaded);
    return this.scoringRun;
  }

  private async runScoring(l: LoadedFile): Promise<void> {
    const token = { stop: false };
    this.scoring = token;
    const panel = this.panelName;
    let pending: ScoreUpdate[] = [];
    const flush = () => {
      if (token.stop || this.loaded !== l) return;
      const batch = pending;
      pending = [];
      this.sendScoreState(batch);
      if (batch.length && this.filterUsesScores()) this.sendView();
    };
    const timer = setInterval(flush, FLUSH_MS);
    try {
      const scorer = this.scorer(l);
      this.sendScoreState([]);
      let next = 0;
      const worker = async () => {
        while (!token.stop && next < l.records.length) {
          const i = next++;
          const r = l.records[i];
          if (scorer.cached(r, panel)) continue;
          const o = await scorer.score(r, panel);
          if (token.stop || this.panelName !== panel) return;
          const s = l.summaries[i];
          if (o.status === 'scored') {
            s.reward = o.reward;
            if (s.verdictSource !== 'stored') {
              s.verdict = o.correct ? 'correct' : 'incorrect';
              s.verdictSource = 'computed';
            }
          }
          pending.push({
            key: i,
            verdict: s.verdict,
            reward: s.reward,
            note: o.status === 'skipped' ? o.reason : null,
          });
        }
      };
      await Promise.all(Array.from({ length: SCORE_CONCURRENCY }, worker));
    } catch (err) {
      this.services.log.error('replay: scoring failed', err);
      this.post({ type: 'error', message: `scoring failed: ${(err as Error).message}` });
    } finally {
      clearInterval(timer);
      if (this.scoring === token) this.scoring = null;
      this.saveScores(l);
      flush();
      if (!token.stop) this.sendScoreState([]);
    }
  }

  private stopScoring(): void {
    if (this.scoring) this.scoring.stop = true;
    this.scoring = null;
    this.sendScoreState([]);
  }

  private record(key: number): TrajectoryRecord | null {
    const r = this.loaded?.records[key];
    if (!r) {
      this.post({ type: 'error', message: `no trajectory #${key} in this list` });
      return null;
    }
    return r;
  }

  private async explain(r: TrajectoryRecord): Promise<{ explanation: Explanation | null; error: string | null }> {
    try {
      const scorer = this.scorer(this.loaded!);
      return { explanation: toExplanation(await scorer.explain(r, this.panelName)), error: null };
    } catch (err) {
      return { explanation: null, error: (err as Error).message };
    }
  }

  private sendDetail(key: number, turn: number | null = null): void {
    const r = this.record(key);
    if (!r) return;
    const shown = turn === null ? null : Math.min(turn, Math.max(0, r.turns.length - 1));
    this.post({ type: 'detail', key, record: r, turn: shown });
    void this.explain(r).then(({ explanation, error }) => this.post({ type: 'explanation', key, explanation, error }));
  }

  private sendCompare(a: number, b: number, show = false): void {
    const ra = this.record(a),
      rb = this.record(b);
    if (!ra || !rb) return;
    this.post({
      type: 'compare',
      a: { key: a, record: ra },
      b: { key: b, record: rb },
      diff: diffSql(ra.finalSql ?? '', rb.finalSql ?? ''),
      ...(show ? { show } : {}),
    });
  }

  private async sendGroup(key: number): Promise<void> {
    const l = this.loaded;
    const r = this.record(key);
    if (!l || !r) return;
    const keys = groupKeys(l.summaries).get(r.groupId) ?? [key];
    const members: GroupMember[] = await Promise.all(
      keys.map(async (k) => {
        const { explanation, error } = await this.explain(l.records[k]);
        return { key: k, record: l.records[k], explanation, unscored: error, advantage: null };
      }),
    );
    const stats = groupStatistics(
      members.map((m) => m.explanation?.total ?? null),
      members.map((m) => m.explanation?.correct ?? null),
    );
    members.forEach((m, i) => {
      m.advantage = stats.advantages[i];
    });
    this.post({ type: 'group', groupId: r.groupId, panel: this.panelName, members, stats });
  }

  private setPanel(name: string): void {
    if (!ReplayPanel.panelNames.includes(name) && !/\.json$/i.test(name)) {
      this.post({
        type: 'error',
        message: `unknown reward panel '${name}' (built-in: ${ReplayPanel.panelNames.join(', ')})`,
      });
      return;
    }
    if (name === this.panelName) return;
    const wasRunning = this.scoring !== null;
    if (this.scoring) this.scoring.stop = true;
    this.scoring = null;
    this.panelName = name;
    const updates = this.applyCached();
    this.sendScoreState(updates);
    this.sendView();
    if (wasRunning || (this.loaded && this.loaded.records.length <= AUTO_SCORE_LIMIT)) void this.scoreAll();
  }

  /** Handles one message from the app, checked by the kit against REPLAY_RULES. */
  private async receive(m: ToHost): Promise<void> {
    switch (m.type) {
      case 'ready':
        if (this.loaded) this.sendList();
        return;
      case 'pickSource':
        await vscode.commands.executeCommand('quarry.openReplay');
        return;
      case 'openFile': {
        const picked = await pickFile();
        if (picked) await this.open(picked);
        return;
      }
      case 'filter': {
        const { filter, dropped } = sanitizeFilter(m.filter);
        if (dropped.length) this.services.log.warn(`replay: filter fields ignored: ${dropped.join(', ')}`);
        this.filter = filter;
        this.filterSeq = m.seq;
        this.sendView();
        // A verdict or reward filter needs scores: computing them is what "lazily" means here.
        if (this.filterUsesScores() && !this.scoring) void this.scoreAll();
        return;
      }
      case 'select':
        this.sendDetail(m.key);
        return;
      case 'compare':
        this.sendCompare(m.a, m.b);
        return;
      case 'group':
        await this.sendGroup(m.key);
        return;
      case 'setPanel':
        this.setPanel(m.panel);
        return;
      case 'score':
        void this.scoreAll();
        return;
      case 'stopScoring':
        this.stopScoring();
        return;
      case 'openSql': {
        const doc = await vscode.workspace.openTextDocument({ language: 'sql', content: m.sql });
        await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
        return;
      }
    }
  }
}

export async function pickFile(): Promise<string | undefined> {
  const uris = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: 'Replay',
    title: 'Open a trajectory file',
    filters: { 'Trajectories (JSONL)': ['jsonl', 'json', 'ndjson'], 'All files': ['*'] },
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return uris?.[0]?.fsPath;
}
