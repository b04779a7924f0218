// The Ask panel's host side: owns the conversation (so hiding the panel, which throws the webview away, loses
// nothing), runs one episode at a time through the core loop, streams it to the webview, and carries out the actions
// the webview asks for (the kit, src/extension/webviews/kit.ts, checks every message first).
import * as vscode from 'vscode';
import type { Services } from '../services';
import { PanelController, registerPanel } from '../webviews/kit';
import type { AskRestore } from '../../protocol/restore';
import { askMessageProblem, type AskState, type ExchangeEvent, type ToApp, type ToHost } from '../../protocol/ask';
import { ASK } from './registration';
import { applyEvent, emptyState } from '../../protocol/askState';
import type { ExecResult } from '../../core/db/types';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import type { Exchange } from '../../core/agent/conversation';
import type { ChatModel } from '../../core/models/types';
import { PROTOCOL_NAMES, type ProtocolName } from '../../core/agent/types';
import { exchangeEvent, TextBatcher, wireResult } from './events';
import { modelSwitchedFrom } from './modelSwitch';
import { dbChoice, type DbChoice } from './pickDatabase';
import { rebuildConversation } from './restore';
import { agentSettings, FINAL_RESULT_MAX_ROWS } from './settings';
import * as actions from './actions';
import { GridSession } from '../results/gridSession';
import { planFor } from '../results/plan';
import type { QuarrySettings } from '../settings';
import { DEMO_OFFER_KEY, realModelOffer, shouldOfferRealModel } from '../models/demoModel';

/** What one ask() produced, for callers that wait (the command's return value, tests). */
export interface AskOutcome {
  id: string;
  end: TrajectoryRecord['end'];
  finalSql: string | null;
  error: string | null;
}

const SET_UP_MODEL = 'Set Up a Model…';

/** A conversation put aside: everything the panel holds for it, to be brought back as it was. */
interface KeptConversation {
  db: DbChoice;
  exchanges: AskState['exchanges'];
  records: (TrajectoryRecord | null)[];
  finals: (ExecResult | null)[];
  shown: (string | undefined)[];
  /** Questions whose result was shown before a window reload: run again when the conversation is brought back. */
  rerun?: number[];
}

export class AskPanel {
  static current: AskPanel | undefined;

  private readonly state: AskState;
  /** Per exchange: the trajectory record once the episode ended, and the raw result of the final SQL's last run. */
  private readonly records: (TrajectoryRecord | null)[] = [];
  private readonly finals: (ExecResult | null)[] = [];
  /** Per exchange: the memory text of the result the user was shown (MTSQL-R1's "SQL Results"). */
  private readonly shown: (string | undefined)[] = [];
  /** The conversations put aside (another database, New conversation), oldest first; the user can go back to each. */
  private readonly kept: KeptConversation[] = [];
  /** The paged grid of each final result on show, by trajectory id: pages of the whole result, run in SQLite. */
  private readonly grids = new Map<string, GridSession>();
  private running: AbortController | null = null;
  private readonly batcher = new TextBatcher((exchange, event) => this.emit(exchange, event));

  private constructor(
    private readonly view: PanelController<ToHost, ToApp>,
    readonly context: vscode.ExtensionContext,
    private readonly services: Services,
    private readonly lastEditor: () => vscode.TextEditor | undefined,
  ) {
    this.state = emptyState();
    AskPanel.current = this;
    view.bind({
      problem: (m) => askMessageProblem(m, this.state.exchanges.length),
      receive: (m) => this.receive(m),
      onDispose: () => this.dispose(),
    });
  }

  /** The Ask panel, created or revealed. */
  static show(
    context: vscode.ExtensionContext,
    services: Services,
    lastEditor: () => vscode.TextEditor | undefined,
  ): AskPanel {
    const current = AskPanel.current;
    if (current && !current.view.disposed) {
      current.view.reveal();
      return current;
    }
    return new AskPanel(PanelController.create(context, services, ASK), context, services, lastEditor);
  }

  /**
   * Registers the panel with the kit: after a window reload VS Code brings it back with the state its app saved — the
   * same database, and the conversation rebuilt from the trajectory store by the saved trajectory ids; results that
   * were shown run again. An unusable state leaves the panel open and empty, saying why.
   */
  static register(
    context: vscode.ExtensionContext,
    services: Services,
    lastEditor: () => vscode.TextEditor | undefined,
  ): void {
    registerPanel(context, services, ASK, async (panel, saved) => {
      const view = PanelController.adopt<ToHost, ToApp>(context, services, ASK, panel);
      const revived = new AskPanel(view, context, services, lastEditor);
      if (!saved.ok) {
        revived.postState();
        revived.notice('error', `The conversation could not come back after the reload: ${saved.error}`);
        return saved.error;
      }
      return revived.restore(saved.value);
    });
  }

  private async restore(saved: AskRestore): Promise<string | null> {
    const { assertSqliteFile } = await import('../../core/db/open');
    const usable = (path: string): string | null => {
      try {
        assertSqliteFile(path);
        return null;
      } catch (err) {
        return `the database ${path} cannot be opened: ${(err as Error).message}`;
      }
    };
    const store = this.services.trajectoryStorePath();
    const wanted = new Set([
      ...saved.exchanges.map((x) => x.id),
      ...saved.conversations.flatMap((c) => c.exchanges.map((x) => x.id)),
    ]);
    const records = new Map<string, TrajectoryRecord>();
    if (wanted.size) {
      const { existsSync } = await import('node:fs');
      const { readTrajectories } = await import('../../core/trajectories/reader');
      const read = existsSync(store) ? await readTrajectories(store, { onInvalid: 'collect' }) : { records: [] };
      for (const r of read.records) if (wanted.has(r.id)) records.set(r.id, r);
    }
    const missing: string[] = [];
    // The kept conversations first (oldest first), each rebuilt from the store; its results run when it is opened.
    for (const c of saved.conversations) {
      const why = usable(c.db.path);
      if (why) {
        this.services.log.warn(`ask: a kept conversation cannot come back after the reload: ${why}`);
        missing.push(...c.exchanges.map((x) => x.id));
        continue;
      }
      const state = emptyState();
      const rows = c.exchanges.map((x) => ({ ...x, rows: [] }));
      const rebuilt = rebuildConversation(state, rows, records, c.db.path, store);
      missing.push(...rebuilt.missing);
      if (!state.exchanges.length) continue;
      this.kept.push({
        db: dbChoice(c.db.path),
        exchanges: state.exchanges,
        records: rebuilt.exchanges.map((x) => x.record),
        finals: rebuilt.exchanges.map(() => null),
        shown: rebuilt.exchanges.map(() => undefined),
        rerun: rebuilt.exchanges.flatMap((x, i) => (x.rerun ? [i] : [])),
      });
    }
    let problem: string | null = null;
    let rerun: number[] = [];
    if (saved.db) {
      const path = saved.db.path;
      problem = usable(path);
      if (problem) this.notice('error', `The earlier conversation cannot come back: ${problem}`);
      else {
        this.state.db = dbChoice(path);
        const rebuilt = rebuildConversation(this.state, saved.exchanges, records, path, store);
        rebuilt.exchanges.forEach((x, i) => {
          this.records[i] = x.record;
          this.finals[i] = null;
        });
        missing.push(...rebuilt.missing);
        rerun = rebuilt.exchanges.flatMap((x, i) => (x.rerun ? [i] : []));
      }
    }
    this.postState();
    if (missing.length) {
      const n = missing.length;
      this.services.log.warn(
        `ask: ${n} question(s) of earlier conversations are not in ${store}: ${missing.join(', ')}`,
      );
      const what = `${n} earlier question${n === 1 ? '' : 's'}`;
      this.notice('info', `${what} could not come back: not in the trajectory store (${store}).`);
    }
    // The results run in the background: the panel is back (and usable) before they are.
    void this.rerunResults(rerun);
    return problem;
  }

  private async rerunResults(exchanges: number[]): Promise<void> {
    for (const at of exchanges) {
      if (this.view.disposed) return;
      try {
        await this.runFinal(at);
      } catch (err) {
        const why = (err as Error).message;
        this.services.log.warn(`ask: running the final SQL of question ${at + 1} again failed: ${why}`);
      }
    }
  }

  get db(): DbChoice | null {
    return this.state.db;
  }
  /** Whether a question about `db` now follows up on the conversation: the same database, and the same model. */
  followsUp(db: DbChoice): boolean {
    return (
      this.state.db?.path === db.path && modelSwitchedFrom(this.state.exchanges, this.services.modelLabel()) === null
    );
  }
  get busy(): boolean {
    return this.running !== null;
  }

  /**
   * Points the panel at a database. A different database starts a new conversation (the old one is about other data);
   * the old one is kept in the panel's list of conversations, to go back to.
   */
  setDatabase(db: DbChoice): void {
    if (this.state.db?.path === db.path) return;
    if (this.running) {
      this.notice('error', 'A question is still running: stop it first (Stop or Escape).');
      return;
    }
    const was = this.state.db;
    const kept = this.putAside();
    this.state.db = { ...db };
    this.postState();
    if (kept && was)
      this.notice(
        'info',
        `New conversation about ${db.label}. The one about ${was.label} is kept: Conversations lists it.`,
      );
  }

  /** Keeps the current conversation in the list (when it has questions) and empties the panel. */
  private putAside(): boolean {
    const had = this.state.exchanges.length > 0 && this.state.db !== null;
    if (had && this.state.db) {
      this.kept.push({
        db: this.state.db,
        exchanges: this.state.exchanges,
        records: [...this.records],
        finals: [...this.finals],
        shown: [...this.shown],
      });
    }
    this.reset();
    return had;
  }

  /** Brings kept conversation `index` back (the current one, if it has questions, is kept in its place). */
  openConversation(index: number): void {
    const chosen = this.kept[index];
    const problem = this.running
      ? 'Stop the running question first.'
      : !Number.isInteger(index) || !chosen
        ? `There is no conversation ${index + 1}.`
        : null;
    if (problem !== null || !chosen) {
      this.notice('error', problem ?? 'There is no such conversation.');
      return;
    }
    this.kept.splice(index, 1);
    this.putAside();
    this.state.db = chosen.db;
    this.state.exchanges = chosen.exchanges;
    this.records.push(...chosen.records);
    this.finals.push(...chosen.finals);
    this.shown.push(...chosen.shown);
    this.postState();
    // Brought back for the first time since a window reload: its results that were shown run again.
    if (chosen.rerun?.length) void this.rerunResults(chosen.rerun);
  }

  /**
   * Asks `question` about the current database: the first question with the chosen protocol, follow-ups with the
   * conversation's, carrying the earlier questions, final SQL and shown results in that protocol's memory format.
   */
  async ask(question: string): Promise<AskOutcome | undefined> {
    const db = this.state.db;
    if (!db) {
      this.notice('error', 'Choose a database first.');
      return undefined;
    }
    if (this.running) {
      this.notice('error', 'A question is still running: stop it first (Stop or Escape).');
      return undefined;
    }
    const { ask } = await import('../../app/ask');
    const { EpisodeSetupError } = await import('../../core/agent/loop');
    const { protocolForNext } = await import('../../core/agent/conversation');
    const all = this.services.settings();
    this.offerRealModel(db, all);
    // Another model than the conversation's: a new conversation (the old one is kept), never a silent switch.
    const modelLabel = this.services.modelLabel();
    const switchedFrom = modelSwitchedFrom(this.state.exchanges, modelLabel);
    if (switchedFrom !== null) {
      this.putAside();
      this.postState();
      this.notice(
        'info',
        `New conversation: the model is now ${modelLabel}, not ${switchedFrom}. ` +
          'The conversation with the other model is kept: Conversations lists it.',
      );
    }
    const settings = agentSettings(all);
    const exchanges = this.exchanges();
    const protocolName = protocolForNext(exchanges, settings.protocol);
    const controller = new AbortController();
    this.running = controller;
    const at = this.state.exchanges.length;
    let model: ChatModel | undefined;
    try {
      const pool = await this.services.pool();
      model = await this.services.createModel(controller.signal);
      this.services.log.info(`ask: "${question}" about ${db.path} with ${protocolName} on ${model.spec}`);
      const outcome = await ask({
        question,
        dbPath: db.path,
        exchanges,
        protocol: settings.protocol,
        pool,
        model,
        signal: controller.signal,
        config: settings.config,
        sampling: settings.sampling,
        modelTimeoutMs: settings.modelTimeoutMs,
        queryTimeoutMs: settings.queryTimeoutMs,
        runFinal: false,
        saveTo: all.trajectories.save ? this.services.trajectoryStorePath() : null,
        meta: { source: 'editor-ask', conversation: this.state.exchanges.map((x) => x.id), modelLabel },
        onEvent: (e) => this.batcher.push(at, exchangeEvent(e, question, modelLabel)),
      });
      const record = outcome.record;
      this.batcher.flush();
      this.records[at] = record;
      this.services.log.info(
        `ask: ${record.id} ended ${record.end} after ${record.turns.length} turn(s)` +
          (record.error ? `: ${record.error}` : ''),
      );
      if (record.end === 'error' && record.error) this.services.log.error(`ask: ${record.error}`);
      if (outcome.savedTo) {
        this.services.log.info(`ask: trajectory ${record.id} appended to ${outcome.savedTo}`);
        this.emit(at, { kind: 'saved', path: outcome.savedTo });
      }
      if (outcome.saveError) this.notice('error', `Quarry ${outcome.saveError}.`);
      if (record.finalSql && !this.view.disposed) await this.runFinal(at);
      return { id: record.id, end: record.end, finalSql: record.finalSql, error: record.error };
    } catch (err) {
      this.batcher.flush();
      const message =
        err instanceof EpisodeSetupError
          ? `Cannot ask about ${db.label}: ${err.message}`
          : `Quarry could not ask: ${(err as Error).message}`;
      this.notice('error', message);
      this.services.log.showError(message);
      return undefined;
    } finally {
      this.running = null;
      await model?.close().catch((e: unknown) => this.services.log.warn(`closing ${model?.spec}: ${String(e)}`));
    }
  }

  stop(): void {
    this.running?.abort();
  }

  /** Once per user: asking the bookshop demo model about another database offers to set up a real model. */
  private offerRealModel(db: DbChoice, settings: QuarrySettings): void {
    const state = this.context.globalState;
    if (!shouldOfferRealModel(settings, db.path, state.get<boolean>(DEMO_OFFER_KEY) === true)) return;
    void state.update(DEMO_OFFER_KEY, true);
    const text = realModelOffer(db.label);
    this.services.log.info(`ask: ${text}`);
    this.notice('info', text);
    void vscode.window.showInformationMessage(text, SET_UP_MODEL).then((pick) => {
      if (pick === SET_UP_MODEL) void vscode.commands.executeCommand('quarry.selectModel');
    });
  }

  /** What the conversation so far means for the next question: answered questions and the results shown. */
  private exchanges(): Exchange[] {
    return this.state.exchanges.map((x, i) => ({
      question: x.question,
      sql: x.finalSql,
      ...((PROTOCOL_NAMES as readonly string[]).includes(x.protocol) ? { protocol: x.protocol as ProtocolName } : {}),
      ...(this.shown[i] !== undefined ? { result: this.shown[i] } : {}),
    }));
  }

  /** Runs exchange `at`'s final SQL (capped at FINAL_RESULT_MAX_ROWS rows) and shows it. */
  async runFinal(at: number): Promise<void> {
    const sql = this.state.exchanges[at]?.finalSql;
    const db = this.state.db;
    if (!sql || !db) return;
    const { exchangeResult } = await import('../../core/agent/conversation');
    this.emit(at, { kind: 'resultRunning' });
    const settings = agentSettings(this.services.settings());
    const { runFinalSql } = await import('../../app/ask');
    const ran = await runFinalSql(await this.services.pool(), db.path, sql, {
      timeoutMs: settings.queryTimeoutMs,
      maxRows: FINAL_RESULT_MAX_ROWS,
    });
    const result: ExecResult = ran ?? {
      ok: false,
      errorClass: 'sql',
      error: 'the run was cancelled',
      columns: [],
      rows: [],
      rowCount: 0,
      truncated: false,
      ms: 0,
    };
    this.finals[at] = result;
    this.shown[at] = exchangeResult(result);
    // A new run: the grid asks for its pages again (the data may have changed).
    this.grids.delete(this.state.exchanges[at].id);
    this.emit(at, { kind: 'result', result: wireResult(result) });
  }

  /** The grid session of exchange `at`'s final result (made when its grid first asks), or null without one. */
  private gridOf(at: number): GridSession | null {
    const x = this.state.exchanges[at];
    const db = this.state.db;
    if (!x?.finalSql || !db) return null;
    let session = this.grids.get(x.id);
    if (!session) {
      const id = x.id;
      session = new GridSession(
        this.services,
        { db: db.path, sql: x.finalSql, timeoutMs: this.services.settings().query.timeoutMs },
        // Only while that exchange is on show (another conversation may be in the panel by the time a page is done).
        (message) => {
          if (this.state.exchanges[at]?.id === id) this.post({ type: 'grid', exchange: at, message });
        },
        `quarry-result-${at + 1}`,
      );
      this.grids.set(id, session);
    }
    return session;
  }

  private reset(): void {
    this.state.exchanges = [];
    this.records.length = 0;
    this.finals.length = 0;
    this.shown.length = 0;
  }

  private emit(at: number, event: ExchangeEvent): void {
    if (applyEvent(this.state, at, event)) this.post({ type: 'event', exchange: at, event });
  }

  private post(m: ToApp): void {
    this.view.post(m);
  }

  private postState(): void {
    this.state.model = this.services.modelLabel();
    this.state.conversations = this.kept.map((c) => ({
      db: c.db,
      first: c.exchanges[0]?.question ?? '',
      questions: c.exchanges.length,
      exchanges: c.exchanges.map((x, i) => ({
        id: x.id,
        hadResult: x.result !== null || (c.rerun?.includes(i) ?? false),
      })),
    }));
    this.post({ type: 'state', state: this.state });
  }

  notice(level: 'info' | 'error', text: string): void {
    this.post({ type: 'notice', level, text });
  }

  focusInput(text?: string): void {
    this.post({ type: 'focusInput', text });
  }

  /** Handles one message the kit checked; what fails is said in the panel. */
  private async receive(m: ToHost): Promise<void> {
    try {
      await this.handle(m);
    } catch (err) {
      const text = `${m.type} failed: ${(err as Error).message}`;
      this.services.log.error(`Ask panel: ${text}`);
      this.notice('error', text);
    }
  }

  private async handle(m: ToHost): Promise<void> {
    switch (m.type) {
      case 'ready':
        this.postState();
        return;
      case 'ask':
        await this.ask(m.question);
        return;
      case 'stop':
        this.stop();
        return;
      case 'changeDb':
        await vscode.commands.executeCommand('quarry.ask', { pickDatabase: true });
        return;
      case 'newConversation':
        if (this.running) return this.notice('error', 'Stop the running question first.');
        this.putAside();
        this.postState();
        return;
      case 'openConversation':
        this.openConversation(m.index);
        return;
      case 'copyText':
        await vscode.env.clipboard.writeText(m.text);
        this.notice('info', 'Copied.');
        return;
      default:
        break;
    }
    const x = this.state.exchanges[m.exchange];
    const record = this.records[m.exchange];
    switch (m.type) {
      case 'run':
        await this.runFinal(m.exchange);
        return;
      case 'openSql':
        if (x.finalSql) await actions.openSql(x.finalSql, this.lastEditor(), this.view.panel.viewColumn, this.db?.path);
        return;
      case 'insertSql':
        if (x.finalSql) this.notice('info', await actions.insertSql(x.finalSql, this.lastEditor()));
        return;
      case 'copySql':
        if (x.finalSql) {
          await vscode.env.clipboard.writeText(x.finalSql);
          this.notice('info', 'SQL copied.');
        }
        return;
      case 'saveTrajectory':
      case 'saveTrajectoryAs':
      case 'label': {
        if (!record) return this.notice('error', 'This question is still running: its trajectory is not complete yet.');
        const path =
          m.type === 'saveTrajectoryAs'
            ? await actions.saveTrajectoryAs(record)
            : await this.saveToStore(m.exchange, record);
        if (!path) return;
        if (m.type !== 'saveTrajectoryAs' && x.savedTo !== path) this.emit(m.exchange, { kind: 'saved', path });
        if (m.type === 'label') await actions.label(path, record.id, this.services);
        else this.notice('info', `Trajectory ${record.id} saved to ${path}.`);
        return;
      }
      case 'plan': {
        const db = this.state.db;
        if (!x.finalSql || !db) return this.notice('error', 'This question has no final SQL to plan.');
        const sql = x.finalSql;
        const outcome = await planFor(this.services, db.path, sql);
        if (this.state.exchanges[m.exchange]?.id === x.id)
          this.post({ type: 'plan', exchange: m.exchange, sql, outcome });
        return;
      }
      case 'grid': {
        const session = this.gridOf(m.exchange);
        if (!session) return this.notice('error', 'This question has no final SQL to show a result of.');
        await session.receive(m.message);
        return;
      }
    }
  }

  /** Appends exchange `at`'s trajectory to the workspace store once; later saves just say where it is. */
  private async saveToStore(at: number, record: TrajectoryRecord): Promise<string | undefined> {
    const already = this.state.exchanges[at].savedTo;
    if (already) return already;
    const path = await actions.appendToStore(record, this.services);
    this.services.log.info(`ask: trajectory ${record.id} appended to ${path}`);
    return path;
  }

  /** The panel was closed: a running question is cancelled. */
  private dispose(): void {
    if (this.running) {
      this.services.log.info('ask: the Ask panel was closed while a question ran; the episode is cancelled');
      this.running.abort();
    }
    this.batcher.flush();
    if (AskPanel.current === this) AskPanel.current = undefined;
  }
}
