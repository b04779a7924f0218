// The reward diagnostics panel's host side: keeps what is shown (file, panel, run report, trajectory) so hiding the
// panel, which throws the webview away, loses nothing; scores through core. Built from the panel kit
// (./registration.ts), which checks every message from the webview.
import * as vscode from 'vscode';
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { Services } from '../services';
import { PanelController, registerPanel } from '../webviews/kit';
import type { DiagnosticsRestore, Parsed } from '../../protocol/restore';
import {
  diagnosticsMessageProblem,
  type PanelChoice,
  type SourceInfo,
  type ToApp,
  type ToHost,
} from '../../protocol/diagnostics';
import type { RunDiagnostics } from '../../core/rewards/report';
import type { TrajectoryDiagnostics } from '../../core/rewards/trajectoryReport';
import type { ResolvedPanel, ScoringResources } from '../../core/rewards/types';
import { BUILTIN_PANEL_NAMES } from '../../core/rewards/builtins';
import { defaultPanelFor } from '../../core/trajectories/summary';
import { filePanel } from './filePanel';
import { DIAGNOSTICS } from './registration';
import type { MismatchSql } from '../../core/rewards/mismatch';
import {
  Cancelled,
  loadPanelChoice,
  loadTrajectories,
  newResources,
  scoreFile,
  scoreOne,
  withMismatchSql,
  type LoadedTrajectories,
} from './scoring';

/** The five papers' panels, in the order of the project's docs, then Progress-SQL's App. E.1 baseline. */
const BUILTIN_PANELS: readonly string[] = BUILTIN_PANEL_NAMES;

export async function pickTrajectoryFile(): Promise<string | undefined> {
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: 'Diagnose',
    title: 'Trajectory file to diagnose',
    filters: { 'Trajectories (JSONL)': ['jsonl', 'json'], 'All files': ['*'] },
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked?.[0]?.fsPath;
}

export class DiagnosticsPanel {
  static current: DiagnosticsPanel | undefined;

  private panelValue = 'sqltrail';
  /** Whether the panel was chosen (by the user, or restored after a reload); until then each file picks its own. */
  private panelChosen = false;
  private panelFile: string | null = null;
  private loaded: LoadedTrajectories | null = null;
  private resources: ScoringResources | null = null;
  private run: RunDiagnostics | null = null;
  /** The panel the run was scored with; a different selection rescores on the way back. */
  private runPanel: string | null = null;
  private trajectory: TrajectoryDiagnostics | null = null;
  /** Which SQL of each trajectory the mismatch rates compare. */
  private mismatchSql: MismatchSql = 'final';
  private view: 'empty' | 'run' | 'trajectory' = 'empty';
  private busy = false;

  private constructor(
    private readonly panel: PanelController<ToHost, ToApp>,
    private readonly services: Services,
  ) {
    DiagnosticsPanel.current = this;
    panel.bind({
      problem: (m) =>
        diagnosticsMessageProblem(
          m,
          this.panelChoices().map((p) => p.value),
        ),
      receive: (m) => this.receive(m),
      onDispose: () => {
        if (DiagnosticsPanel.current === this) DiagnosticsPanel.current = undefined;
      },
    });
  }

  static show(context: vscode.ExtensionContext, services: Services): DiagnosticsPanel {
    const cur = DiagnosticsPanel.current;
    if (cur && !cur.panel.disposed) {
      cur.panel.reveal();
      return cur;
    }
    return new DiagnosticsPanel(PanelController.create(context, services, DIAGNOSTICS), services);
  }

  /**
   * Registers the panel with the kit: after a window reload it comes back with the state its app saved (checked by
   * diagnosticsRestore): the same reward panel, the file scored again, and the trajectory that was shown (after its
   * run, when the run came first). The revive says why the state (or the panel file it names) was not used, or null.
   */
  static register(context: vscode.ExtensionContext, services: Services): void {
    registerPanel(context, services, DIAGNOSTICS, (panel, saved) =>
      DiagnosticsPanel.revive(context, services, panel, saved),
    );
  }

  private static async revive(
    context: vscode.ExtensionContext,
    services: Services,
    panel: vscode.WebviewPanel,
    saved: Parsed<DiagnosticsRestore>,
  ): Promise<string | null> {
    const view = PanelController.adopt<ToHost, ToApp>(context, services, DIAGNOSTICS, panel);
    const revived = new DiagnosticsPanel(view, services);
    if (!saved.ok) {
      revived.post({ type: 'error', text: `The panel could not come back as it was after the reload: ${saved.error}` });
      return saved.error;
    }
    const { file, panel: choice, trajectoryId, withRun } = saved.value;
    const problem = choice === null ? null : await revived.usePanel(choice);
    if (file !== null) void revived.reopen(file, trajectoryId, withRun);
    return problem;
  }

  /** Selects a built-in panel or a panel file that still loads; says why not otherwise. */
  private async usePanel(choice: string): Promise<string | null> {
    if (BUILTIN_PANELS.includes(choice)) {
      this.panelValue = choice;
      this.panelChosen = true;
      return null;
    }
    if (!/\.json$/i.test(choice) || !existsSync(choice)) {
      return `the reward panel ${JSON.stringify(choice.slice(0, 200))} is neither built in nor a panel file`;
    }
    try {
      await loadPanelChoice(choice, this.services);
    } catch (err) {
      return `the panel file ${choice} no longer loads: ${(err as Error).message}`;
    }
    this.panelFile = choice;
    this.panelValue = choice;
    this.panelChosen = true;
    return null;
  }

  private async reopen(file: string, trajectoryId: string | null, withRun: boolean): Promise<void> {
    if (!existsSync(file)) {
      this.fail(`the trajectory file ${file} is gone`);
      return;
    }
    await this.open(file, withRun ? undefined : (trajectoryId ?? undefined));
    if (withRun && trajectoryId !== null) {
      await this.act(`cannot open ${trajectoryId}`, () => this.showTrajectory(trajectoryId));
    }
  }

  private panelChoices(): PanelChoice[] {
    const out: PanelChoice[] = BUILTIN_PANELS.map((p) => ({ value: p, label: p }));
    if (this.panelFile) out.push({ value: this.panelFile, label: `${basename(this.panelFile)} (file)` });
    return out;
  }

  private post(message: ToApp): void {
    this.panel.post(message);
  }

  private source(): SourceInfo | null {
    const l = this.loaded;
    return l
      ? {
          file: l.file,
          label: vscode.workspace.asRelativePath(l.file),
          records: l.records.length,
          invalid: l.invalid.slice(0, 20),
        }
      : null;
  }

  /** Everything the app needs to draw the current view (after `ready`: a new or restored webview). */
  private sendAll(): void {
    this.post({ type: 'panels', panels: this.panelChoices(), selected: this.panelValue });
    const source = this.source();
    if (this.view === 'trajectory' && this.trajectory && source) {
      this.post({ type: 'trajectory', source, trajectory: this.trajectory, hasRun: this.run !== null });
    } else if (this.view === 'run' && this.run && source) {
      this.post({ type: 'run', source, run: this.run });
    }
  }

  private fail(text: string, err?: unknown): void {
    this.services.log.error(`diagnostics: ${text}`, err);
    this.post({
      type: 'error',
      text: err === undefined ? text : `${text}: ${err instanceof Error ? err.message : String(err)}`,
    });
  }

  private async resolvedPanel(): Promise<ResolvedPanel> {
    return loadPanelChoice(this.panelValue, this.services);
  }

  /** Opens a file: the whole run, or one trajectory of it. */
  /**
   * Opens `file` (on trajectory `id`, when given). `onProtocolPanel`: show that trajectory on the reward panel of its
   * own protocol, as Replay does (the command's {file, id}); a window reload keeps the panel it had instead.
   */
  async open(file: string, id?: string, onProtocolPanel = false): Promise<void> {
    if (this.busy) {
      void vscode.window.showInformationMessage('Quarry: the diagnostics panel is still scoring; cancel it or wait.');
      return;
    }
    this.busy = true;
    try {
      this.post({ type: 'busy', text: `Reading ${basename(file)}…` });
      let loaded: LoadedTrajectories;
      try {
        loaded = await loadTrajectories(file);
      } catch (err) {
        this.fail(`cannot open ${file}`, err);
        return;
      }
      if (loaded.records.length === 0) {
        this.fail(
          `${file} holds no valid trajectory records` +
            `${loaded.invalid.length ? ` (${loaded.invalid.length} invalid line(s): ${loaded.invalid[0]})` : ''}`,
        );
        return;
      }
      this.loaded = loaded;
      const record = id === undefined ? undefined : loaded.byId.get(id);
      if (onProtocolPanel && record) {
        this.panelValue = defaultPanelFor(record.protocol.name);
        this.post({ type: 'panels', panels: this.panelChoices(), selected: this.panelValue });
      } else if (!this.panelChosen) {
        // The trajectories' own protocol's panel (skyrl trajectories on the skyrl panel), until the user picks one.
        this.panelValue = filePanel(loaded.records);
        this.post({ type: 'panels', panels: this.panelChoices(), selected: this.panelValue });
      }
      this.resources = await newResources(this.services);
      this.run = null;
      this.runPanel = null;
      this.trajectory = null;
      if (id !== undefined) await this.showTrajectory(id);
      else await this.showRunView();
    } catch (err) {
      this.fail('diagnostics failed', err);
    } finally {
      this.busy = false;
    }
  }

  private async showRunView(): Promise<void> {
    const loaded = this.loaded;
    if (!loaded || !this.resources) return;
    if (!this.run || this.runPanel !== this.panelValue) {
      const panel = await this.resolvedPanel();
      try {
        const busy = (text: string) => this.post({ type: 'busy', text });
        this.run = await scoreFile(loaded, panel, this.resources, busy, this.mismatchSql);
        this.runPanel = this.panelValue;
      } catch (err) {
        if (err instanceof Cancelled || (err as Error)?.name === 'Cancelled') {
          this.post({ type: 'error', text: 'Scoring was cancelled. Pick a panel or open the file again to score it.' });
          this.services.log.info(`diagnostics: scoring ${loaded.file} cancelled`);
          return;
        }
        throw err;
      }
      this.services.log.info(
        `diagnostics: scored ${this.run.scored} trajectories of ${loaded.file} with ${panel.name}`,
      );
    }
    this.view = 'run';
    this.trajectory = null;
    this.post({ type: 'run', source: this.source()!, run: this.run });
  }

  private async showTrajectory(id: string): Promise<void> {
    const loaded = this.loaded;
    if (!loaded || !this.resources) return;
    if (!loaded.byId.has(id)) {
      this.fail(`no trajectory with id ${JSON.stringify(id)} in ${basename(loaded.file)}`);
      return;
    }
    this.post({ type: 'busy', text: `Scoring ${id}…` });
    this.trajectory = await scoreOne(loaded, id, await this.resolvedPanel(), this.resources);
    this.view = 'trajectory';
    this.post({ type: 'trajectory', source: this.source()!, trajectory: this.trajectory, hasRun: this.run !== null });
  }

  /** Runs one user action, one at a time; errors go to the panel and the log. */
  private async act(what: string, f: () => Promise<void>): Promise<void> {
    if (this.busy) {
      this.post({ type: 'busy', text: 'Still working on the previous request…' });
      return;
    }
    this.busy = true;
    try {
      await f();
    } catch (err) {
      this.fail(what, err);
    } finally {
      this.busy = false;
    }
  }

  /** One message from the app, checked by the kit (DIAGNOSTICS_RULES, diagnosticsMessageProblem). */
  private async receive(msg: ToHost): Promise<void> {
    switch (msg.type) {
      case 'ready':
        this.sendAll();
        return;
      case 'setPanel':
        this.panelChosen = true;
        if (msg.panel === this.panelValue) return;
        this.panelValue = msg.panel;
        return this.act(`cannot score with ${msg.panel}`, async () => {
          if (this.view === 'trajectory' && this.trajectory) await this.showTrajectory(this.trajectory.id);
          else if (this.view === 'run') await this.showRunView();
        });
      case 'pickPanelFile': {
        const picked = await vscode.window.showOpenDialog({
          canSelectMany: false,
          openLabel: 'Use panel',
          title: 'Reward panel file (JSON)',
          filters: { 'Panel JSON': ['json'] },
          defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
        });
        const file = picked?.[0]?.fsPath;
        if (!file) return;
        try {
          await loadPanelChoice(file, this.services);
        } catch (err) {
          this.fail('cannot use that panel file', err);
          this.post({ type: 'panels', panels: this.panelChoices(), selected: this.panelValue });
          return;
        }
        this.panelFile = file;
        this.post({ type: 'panels', panels: this.panelChoices(), selected: this.panelValue });
        await this.panel.deliver({ type: 'setPanel', panel: file });
        return;
      }
      case 'openFile': {
        const file = await pickTrajectoryFile();
        if (file) await this.open(file);
        return;
      }
      case 'openTrajectory':
        return this.act(`cannot open ${msg.id}`, () => this.showTrajectory(msg.id));
      case 'openReplay': {
        const file = this.loaded?.file;
        if (!file) return;
        if (this.services.openReplay) await this.services.openReplay(file, msg.id);
        else await vscode.commands.executeCommand('quarry.openReplay', { file, id: msg.id });
        return;
      }
      case 'showRun':
        return this.act('cannot show the run', () => this.showRunView());
      case 'setMismatchSql': {
        const sql = msg.sql as MismatchSql; // checked by diagnosticsMessageProblem
        if (sql === this.mismatchSql) return;
        this.mismatchSql = sql;
        return this.act('cannot compute the mismatch rates', async () => {
          if (!this.run || !this.loaded || !this.resources) return;
          this.run = await withMismatchSql(this.loaded, this.run, this.resources, sql);
          if (this.view === 'run') this.post({ type: 'run', source: this.source()!, run: this.run });
        });
      }
    }
  }
}
