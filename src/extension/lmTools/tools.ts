// Quarry's sandbox as language-model tools for VS Code's agents (Copilot's agent mode, any chat participant): the tools
// package.json contributes under `languageModelTools`, registered with vscode.lm.registerTool. A run shows its SQL in
// the confirmation before it runs; every call is appended to the trajectory store as a step of its agent-mode session
// (stepRecord.ts), so Replay and Labeling see it; a run's result opens in Query Results's paged grid on request
// (`openInGrid`, or "Quarry: Open the Agent's Last Query in Query Results"). "Quarry: Run a Language-Model Tool…" calls
// one through vscode.lm.invokeTool, as an agent would, to try them. In Restricted Mode the tools work as Ask does
// (the sandbox only reads), but every call asks first: the folder's data goes to a model the user did not pick for it.
import * as vscode from 'vscode';
import type { Services } from '../services';
import { isTrusted } from '../trust';
import { workspaceDatabases } from '../ask/pickDatabase';
import { agentSettings } from '../ask/settings';
import { ResultsPanel } from '../results/panel';
import { lmToolsApi, type LmToolsApi, type PreparedToolInvocation } from './lmApi';
import { ToolSessions } from './sessions';
import { toolStepRecord } from './stepRecord';
import {
  describeSchema,
  explainPlan,
  listDatabases,
  LM_TOOLS,
  readSqlInput,
  runSql,
  ToolInputError,
  MAX_QUESTION_CHARS,
  databaseLabel,
  type LmToolName,
  type ToolContext,
  type ToolOutcome,
} from './toolCalls';

/** A markdown code block that no backtick run inside `text` can close early. */
function fenced(text: string, lang: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((s) => s.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${text}\n${fence}`;
}

function inputField(input: unknown, key: string): string {
  const v = (input as Record<string, unknown> | null)?.[key];
  return typeof v === 'string' ? v : '';
}

interface LmToolsFeature {
  /** The last statement a run tool ran, for "Open in Query Results". */
  lastRun(): { db: string; sql: string } | null;
}

export function registerLmTools(context: vscode.ExtensionContext, services: Services): LmToolsFeature | undefined {
  const api = lmToolsApi();
  if (!api) {
    services.log.info('language-model tools: this editor has no vscode.lm.registerTool (VS Code 1.95+); not offered');
    return undefined;
  }
  const sessions = new ToolSessions();
  let last: { db: string; sql: string } | null = null;

  async function toolContext(): Promise<ToolContext> {
    const s = services.settings();
    return {
      pool: await services.pool(),
      databases: await workspaceDatabases(s.databases.glob),
      workspace: services.workspaceDir(),
      timeoutMs: s.query.timeoutMs,
      maxRows: s.observation.maxRows,
      maxChars: s.observation.maxChars,
    };
  }

  async function record(
    tool: LmToolName,
    input: unknown,
    token: unknown,
    startedAt: Date,
    ms: number,
    outcome: ToolOutcome,
    error?: string,
  ): Promise<void> {
    const s = services.settings();
    if (!s.trajectories.save) return;
    const { session, step } = sessions.next(token);
    try {
      const { dbSha256 } = await import('../../core/trajectories/dbHash');
      const { appendTrajectory } = await import('../../app/trajectoryStore');
      const db = outcome.db ? { path: outcome.db, sha256: await dbSha256(outcome.db) } : null;
      const question = inputField(input, 'question') || undefined;
      const rec = toolStepRecord({
        tool,
        input,
        session,
        step,
        startedAt,
        ms,
        db,
        workspace: services.workspaceDir(),
        question,
        sql: outcome.sql,
        exec: outcome.exec,
        text: outcome.text,
        error,
      });
      await appendTrajectory(rec, services.trajectoryStorePath());
      services.log.info(`language-model tools: ${tool} recorded as ${rec.id} (${session} step ${step})`);
    } catch (err) {
      services.log.error(`language-model tools: the ${tool} call could not be recorded: ${(err as Error).message}`);
    }
  }

  /** Registers one tool: prepare says what it will do (and asks when it should), invoke runs and records it. */
  function tool(
    name: LmToolName,
    prepare: (input: unknown) => Promise<PreparedToolInvocation>,
    run: (ctx: ToolContext, input: unknown, signal: AbortSignal, token: unknown) => Promise<ToolOutcome>,
    opts: { recordSteps?: boolean } = {},
  ): void {
    context.subscriptions.push(
      api!.registerTool(name, {
        prepareInvocation: async ({ input }) => {
          const prepared = await prepare(input);
          if (prepared.confirmationMessages || isTrusted()) return prepared;
          return {
            ...prepared,
            confirmationMessages: {
              title: `Let the agent use Quarry's ${name}?`,
              message: 'This folder is not trusted: its databases go to the agent only when you allow it.',
            },
          };
        },
        invoke: async (options, cancel) => {
          const startedAt = new Date();
          const t0 = performance.now();
          const controller = new AbortController();
          const onCancel = cancel.onCancellationRequested(() => controller.abort());
          let outcome: ToolOutcome;
          let error: string | undefined;
          try {
            outcome = await run(await toolContext(), options.input, controller.signal, options.toolInvocationToken);
          } catch (err) {
            if ((err as Error).name === 'AbortError' || cancel.isCancellationRequested)
              throw new vscode.CancellationError();
            error = (err as Error).message;
            outcome = { text: `Error: ${error}`, refused: err instanceof ToolInputError };
          } finally {
            onCancel.dispose();
          }
          services.log.info(`language-model tools: ${name} ${error ? `refused: ${error}` : 'answered'}`);
          if (opts.recordSteps !== false)
            await record(
              name,
              options.input,
              options.toolInvocationToken,
              startedAt,
              performance.now() - t0,
              outcome,
              error,
            );
          return api!.textResult(outcome.text);
        },
      }),
    );
  }

  const label = (input: unknown) => {
    const name = inputField(input, 'database');
    return name ? `\`${name}\`` : 'a workspace database';
  };

  tool(
    LM_TOOLS.listDatabases,
    async () => ({ invocationMessage: 'Listing the workspace’s SQLite databases' }),
    async (ctx) => listDatabases(ctx),
  );
  tool(
    LM_TOOLS.describeSchema,
    async (input) => ({ invocationMessage: new vscode.MarkdownString(`Reading the schema of ${label(input)}`) }),
    (ctx, input) => describeSchema(ctx, input),
  );
  tool(
    LM_TOOLS.runSql,
    async (input) => {
      const sql = inputField(input, 'sql');
      const secs = services.settings().query.timeoutMs / 1000;
      return {
        invocationMessage: new vscode.MarkdownString(`Running read-only SQL on ${label(input)}`),
        confirmationMessages: {
          title: `Run this SQL on ${inputField(input, 'database') || 'a workspace database'}?`,
          message: new vscode.MarkdownString(
            `Quarry runs it read-only in its sandbox, stopped after ${secs} s: \n\n${fenced(sql, 'sql')}`,
          ),
        },
      };
    },
    async (ctx, input, signal) => {
      const outcome = await runSql(ctx, input, signal);
      if (outcome.db && outcome.sql) {
        last = { db: outcome.db, sql: outcome.sql };
        const { openInGrid } = readSqlInput(ctx, input);
        if (openInGrid && outcome.exec?.ok) void ResultsPanel.show(context, services, outcome.db, outcome.sql);
      }
      return outcome;
    },
  );
  tool(
    LM_TOOLS.explainPlan,
    async (input) => ({
      invocationMessage: new vscode.MarkdownString(`Planning a query on ${label(input)} (not run)`),
    }),
    (ctx, input, signal) => explainPlan(ctx, input, signal),
  );
  tool(
    LM_TOOLS.ask,
    async (input) => ({
      invocationMessage: new vscode.MarkdownString(`Asking Quarry's agent about ${label(input)}`),
      confirmationMessages: {
        title: `Ask Quarry's agent about ${inputField(input, 'database') || 'a workspace database'}?`,
        message: new vscode.MarkdownString(
          `> ${inputField(input, 'question').replace(/\n/g, ' ')}\n\nQuarry's agent (${services.modelLabel()}) ` +
            'writes and runs read-only SQL to answer; its trajectory is saved.',
        ),
      },
    }),
    (ctx, input, signal) => askAgent(ctx, services, input, signal),
    // The episode's own trajectory is saved by ask(), as the Ask panel's are.
    { recordSteps: false },
  );

  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.lmTools.openLastResult', async () => {
      if (!last) {
        void vscode.window.showInformationMessage('Quarry: no agent has run a query with Quarry’s tools yet.');
        return;
      }
      await ResultsPanel.show(context, services, last.db, last.sql);
    }),
    vscode.commands.registerCommand('quarry.lmTools.run', () => runToolCommand(api, services, () => last)),
  );
  return { lastRun: () => last };
}

/** quarry_ask: one question to Quarry's own agent with the configured model, saved as Ask saves it. */
async function askAgent(ctx: ToolContext, services: Services, raw: unknown, signal: AbortSignal): Promise<ToolOutcome> {
  const input = (raw ?? {}) as Record<string, unknown>;
  const question = typeof input.question === 'string' ? input.question.trim() : '';
  if (!question) throw new ToolInputError('"question" is required');
  if (question.length > MAX_QUESTION_CHARS)
    throw new ToolInputError(`"question" is longer than ${MAX_QUESTION_CHARS} characters`);
  const { db } = readSqlInput(ctx, { database: input.database, sql: 'SELECT 1' });
  const settings = services.settings();
  const agent = agentSettings(settings);
  const { ask } = await import('../../app/ask');
  const { renderObservation } = await import('../../core/db/observation');
  const model = await services.createModel(signal);
  try {
    const outcome = await ask({
      question,
      dbPath: db,
      protocol: agent.protocol,
      pool: ctx.pool,
      model,
      signal,
      config: agent.config,
      sampling: agent.sampling,
      modelTimeoutMs: agent.modelTimeoutMs,
      queryTimeoutMs: agent.queryTimeoutMs,
      resultRows: ctx.maxRows,
      saveTo: settings.trajectories.save ? services.trajectoryStorePath() : null,
      meta: { source: 'vscode-lm-tool', tool: LM_TOOLS.ask },
    });
    const { record, final } = outcome;
    const lines = [
      `Quarry's agent (${record.protocol.name}, ${model.spec}) ended with "${record.end}" after ` +
        `${record.turns.length} turn${record.turns.length === 1 ? '' : 's'}.`,
    ];
    if (record.finalSql) lines.push(`Final SQL:\n${record.finalSql}`);
    if (final) lines.push(`Result:\n${renderObservation(final, { format: 'df', maxChars: ctx.maxChars })}`);
    if (record.error) lines.push(`Error: ${record.error}`);
    lines.push(`Trajectory ${record.id}${outcome.savedTo ? ` saved to ${outcome.savedTo}` : ' (not saved)'}.`);
    return { db, sql: record.finalSql ?? undefined, text: lines.join('\n\n') };
  } finally {
    await model.close?.();
  }
}

/**
 * "Quarry: Run a Language-Model Tool…": picks one of Quarry's tools from vscode.lm.tools, asks for its input, and
 * invokes it through vscode.lm.invokeTool — VS Code shows the same confirmation an agent's call gets — then shows
 * what the model would read, with "Open in Query Results" after a run.
 */
async function runToolCommand(
  api: LmToolsApi,
  services: Services,
  lastRun: () => { db: string; sql: string } | null,
): Promise<void> {
  const ours = api.tools.filter((t) => t.name.startsWith('quarry_'));
  if (!ours.length) {
    void vscode.window.showWarningMessage('Quarry: VS Code lists none of Quarry’s language-model tools.');
    return;
  }
  const picked = await vscode.window.showQuickPick(
    ours.map((t) => ({ label: t.name, detail: t.description })),
    { title: 'Quarry: Run a Language-Model Tool', placeHolder: 'Which tool?' },
  );
  if (!picked) return;
  const name = picked.label as LmToolName;
  const input: Record<string, unknown> = {};
  if (name !== LM_TOOLS.listDatabases) {
    const dbs = await workspaceDatabases(services.settings().databases.glob);
    const ws = services.workspaceDir();
    const db = await vscode.window.showQuickPick(
      dbs.map((p) => databaseLabel(p, ws)),
      { title: `${name}: which database?`, placeHolder: 'Database' },
    );
    if (!db) return;
    input.database = db;
  }
  if (name === LM_TOOLS.runSql || name === LM_TOOLS.explainPlan) {
    const sql = await vscode.window.showInputBox({ title: `${name}: the SQL statement`, prompt: 'One statement' });
    if (!sql) return;
    input.sql = sql;
  } else if (name === LM_TOOLS.ask) {
    const question = await vscode.window.showInputBox({ title: `${name}: the question`, prompt: 'A question' });
    if (!question) return;
    input.question = question;
  }
  let text: string;
  try {
    const result = await api.invokeTool(name, { input, toolInvocationToken: undefined });
    text = api.resultText(result);
  } catch (err) {
    const e = err as Error;
    // Declined in VS Code's confirmation: the main thread's CancellationError arrives by its name or message.
    if (err instanceof vscode.CancellationError || e.name === 'Canceled' || e.message === 'Canceled') {
      void vscode.window.showInformationMessage(`Quarry: ${name} was not run.`);
      return;
    }
    throw err;
  }
  const doc = await vscode.workspace.openTextDocument({
    language: 'plaintext',
    content: `${name} ${JSON.stringify(input)}\n\n${text}\n`,
  });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: false });
  const ran = lastRun();
  if (name === LM_TOOLS.runSql && ran) {
    const open = await vscode.window.showInformationMessage(
      `Quarry: ${name} answered (${text.split('\n').length} lines).`,
      'Open in Query Results',
    );
    if (open) await vscode.commands.executeCommand('quarry.lmTools.openLastResult');
  }
}
