// The `@quarry` chat participant: the same agent as the Ask panel, answering in VS Code's chat view. Progress while it
// works, the turns as a list, the final SQL and the first rows of its result, and buttons to replay the saved
// trajectory or to ask again in the Ask panel. Follow-ups in one chat continue the conversation in its protocol.
import * as vscode from 'vscode';
import type { Services } from '../services';
import type { ChatModel } from '../../core/models/types';
import type { Exchange } from '../../core/agent/conversation';
import { PROTOCOL_NAMES, type ProtocolName } from '../../core/agent/types';
import { agentSettings } from '../ask/settings';
import { lastDatabase, rememberDatabase, workspaceDatabases } from '../ask/pickDatabase';
import {
  codeBlock,
  CHAT_RESULT_ROWS,
  endMarkdown,
  escapeMarkdown,
  inlineCode,
  resultTable,
  turnsMarkdown,
} from './markdown';
import { resolveDatabase } from './resolveDatabase';

/** What each answer leaves in the chat history, so the next message can follow up on it. */
export interface QuarryChatMetadata {
  quarry: {
    db: string;
    question: string;
    sql: string | null;
    result?: string;
    /** The protocol that answered; follow-ups keep it. */
    protocol?: string;
    trajectoryId: string;
    trajectoryPath: string | null;
  };
}

function isQuarryMetadata(m: unknown): m is QuarryChatMetadata {
  const q = (m as Partial<QuarryChatMetadata> | undefined)?.quarry;
  return !!q && typeof q.db === 'string' && typeof q.question === 'string';
}

function isProtocolName(p: unknown): p is ProtocolName {
  return typeof p === 'string' && (PROTOCOL_NAMES as readonly string[]).includes(p);
}

/** Earlier answers of this participant about the same database, oldest first. */
function historyExchanges(history: vscode.ChatContext['history'], dbPath: string): Exchange[] {
  const out: Exchange[] = [];
  for (const turn of history) {
    // Response turns are told apart by shape: requests carry a prompt, responses a result.
    if (!('result' in turn) || turn.participant !== 'quarry.chat') continue;
    const meta = turn.result.metadata;
    if (!isQuarryMetadata(meta) || meta.quarry.db !== dbPath) continue;
    out.push({
      question: meta.quarry.question,
      sql: meta.quarry.sql,
      ...(isProtocolName(meta.quarry.protocol) ? { protocol: meta.quarry.protocol } : {}),
      ...(meta.quarry.result !== undefined ? { result: meta.quarry.result } : {}),
    });
  }
  return out;
}

/** The prompt without the `#file:…` reference text (the reference itself says which database). */
function promptText(request: vscode.ChatRequest): string {
  let text = request.prompt;
  const ranges = request.references
    .map((r) => r.range)
    .filter((r): r is [number, number] => Array.isArray(r))
    .sort((a, b) => b[0] - a[0]);
  for (const [start, end] of ranges) text = text.slice(0, start) + text.slice(end);
  return text.replace(/\s+/g, ' ').trim();
}

async function referencedDatabases(request: vscode.ChatRequest): Promise<string[]> {
  const { assertSqliteFile } = await import('../../core/db/open');
  const out: string[] = [];
  for (const ref of request.references) {
    const uri =
      ref.value instanceof vscode.Uri ? ref.value : ref.value instanceof vscode.Location ? ref.value.uri : undefined;
    if (uri?.scheme !== 'file') continue;
    try {
      assertSqliteFile(uri.fsPath);
      out.push(uri.fsPath);
    } catch {
      // A referenced file that is not SQLite is context for someone else, not our database.
    }
  }
  return out;
}

export function register(context: vscode.ExtensionContext, services: Services): void {
  if (!vscode.chat || typeof vscode.chat.createChatParticipant !== 'function') {
    services.log.info('chat: this editor has no chat API; @quarry is not available');
    return;
  }
  const participant = vscode.chat.createChatParticipant('quarry.chat', (request, chatContext, stream, token) =>
    answer(context, services, request, chatContext, stream, token),
  );
  participant.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'icons', 'quarry.svg');
  context.subscriptions.push(participant);
  if (context.extensionMode === vscode.ExtensionMode.Test || process.env.QUARRY_TEST_HOOKS === '1')
    registerTestHook(context, services);
}

/** What a test hands the chat handler: the prompt, `#file` references, earlier answers' metadata. */
interface ChatTestRequest {
  prompt: string;
  references?: string[];
  history?: { question: string; metadata: QuarryChatMetadata }[];
  /** Cancel the request as soon as a progress message containing this text is shown. */
  cancelOnProgress?: string;
  /** Instead of a request: cancel the one running now. */
  cancel?: boolean;
}

/** One call the handler made on the response stream. */
export type StreamPart =
  | { kind: 'markdown' | 'progress'; text: string }
  | { kind: 'button'; command: string; title: string; arguments: unknown[] };

/**
 * Test-only: `quarry.chat.testHook` runs the participant's handler with a recording response stream and a real
 * cancellation token (a chat view needs a language-model provider to send anything, which a test editor lacks).
 */
function registerTestHook(context: vscode.ExtensionContext, services: Services): void {
  let current: vscode.CancellationTokenSource | undefined;
  context.subscriptions.push(
    vscode.commands.registerCommand('quarry.chat.testHook', async (req: ChatTestRequest) => {
      if (req.cancel) {
        current?.cancel();
        return { cancelled: current !== undefined };
      }
      const parts: StreamPart[] = [];
      const cts = new vscode.CancellationTokenSource();
      current = cts;
      const text = (v: string | vscode.MarkdownString) => (typeof v === 'string' ? v : v.value);
      const stream = {
        markdown: (v: string | vscode.MarkdownString) => {
          parts.push({ kind: 'markdown', text: text(v) });
        },
        progress: (v: string) => {
          parts.push({ kind: 'progress', text: v });
          if (req.cancelOnProgress && v.includes(req.cancelOnProgress)) cts.cancel();
        },
        button: (c: vscode.Command) => {
          parts.push({ kind: 'button', command: c.command, title: c.title, arguments: c.arguments ?? [] });
        },
      } as unknown as vscode.ChatResponseStream;
      const references = (req.references ?? []).map((p) => ({
        id: 'vscode.file',
        value: vscode.Uri.file(p),
        range: undefined,
      }));
      const request = {
        prompt: req.prompt,
        references,
        command: undefined,
        toolReferences: [],
      } as unknown as vscode.ChatRequest;
      const history = (req.history ?? []).map((h) => ({
        participant: 'quarry.chat',
        response: [],
        result: { metadata: h.metadata },
        command: undefined,
      }));
      try {
        const result = await answer(
          context,
          services,
          request,
          { history } as unknown as vscode.ChatContext,
          stream,
          cts.token,
        );
        return { parts, result: JSON.parse(JSON.stringify(result)) as vscode.ChatResult };
      } finally {
        if (current === cts) current = undefined;
        cts.dispose();
      }
    }),
  );
}

async function answer(
  context: vscode.ExtensionContext,
  services: Services,
  request: vscode.ChatRequest,
  chatContext: vscode.ChatContext,
  stream: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<vscode.ChatResult> {
  const controller = new AbortController();
  const onCancel = token.onCancellationRequested(() => controller.abort());
  let model: ChatModel | undefined;
  try {
    const settings = services.settings();
    const question = promptText(request);
    const candidates = await workspaceDatabases(settings.databases.glob);
    const resolved = resolveDatabase({
      referenced: await referencedDatabases(request),
      prompt: question,
      candidates,
      last: lastDatabase(context.workspaceState),
    });
    if (!resolved) {
      const list = candidates
        .slice(0, 20)
        .map((p) => `- ${inlineCode(vscode.workspace.asRelativePath(p))}`)
        .join('\n');
      stream.markdown(
        candidates.length === 0
          ? `There are no SQLite databases matching ${inlineCode(settings.databases.glob)} in this workspace.`
          : 'Which database? Name one in your question ' +
              `(e.g. *… in ${escapeMarkdown(vscode.workspace.asRelativePath(candidates[0]))}*) ` +
              `or attach it with \`#file\`:\n\n${list}\n`,
      );
      return {};
    }
    if (question === '') {
      stream.markdown('Ask a question about the database, e.g. *@quarry which customers ordered the most books?*');
      return {};
    }
    await rememberDatabase(context.workspaceState, resolved.path);
    const label = vscode.workspace.asRelativePath(resolved.path);
    const { protocolForNext, exchangeResult } = await import('../../core/agent/conversation');
    const { ask } = await import('../../app/ask');
    const agent = agentSettings(settings);
    const earlier = historyExchanges(chatContext.history, resolved.path);
    const protocolName = protocolForNext(earlier, agent.protocol);

    stream.progress(`Reading ${label}…`);
    const pool = await services.pool();
    // Newer VS Code passes the model the chat view chose for this request (not in this @types/vscode yet).
    const chosen = (request as { model?: vscode.LanguageModelChat }).model;
    if (settings.model.backend === 'vscode-lm' && chosen) {
      // Use the chat view's choice rather than the setting's.
      const { createVscodeLmModel } = await import('../models/vscodeLm');
      model = createVscodeLmModel(chosen);
    } else {
      model = await services.createModel(controller.signal);
    }
    services.log.info(
      `chat: "${question}" about ${resolved.path} (${resolved.source}) with ${protocolName} on ${model.spec}`,
    );
    let budget = agent.config.maxTurns;
    const outcome = await ask({
      question,
      dbPath: resolved.path,
      exchanges: earlier,
      protocol: agent.protocol,
      pool,
      model,
      signal: controller.signal,
      config: agent.config,
      sampling: agent.sampling,
      modelTimeoutMs: agent.modelTimeoutMs,
      queryTimeoutMs: agent.queryTimeoutMs,
      resultRows: CHAT_RESULT_ROWS,
      saveTo: settings.trajectories.save ? services.trajectoryStorePath() : null,
      meta: { source: 'editor-chat' },
      onEvent: (e) => {
        if (e.type === 'start') budget = e.budget;
        else if (e.type === 'turn')
          stream.progress(
            e.finalCall ? 'Turns used up: asking for the final answer…' : `Turn ${e.index + 1} of ${budget}: thinking…`,
          );
        else if (e.type === 'action' && e.action.kind === 'execute' && e.action.sql)
          stream.progress(`Turn ${e.index + 1}: running ${e.action.sql.replace(/\s+/g, ' ').slice(0, 80)}`);
      },
    });
    const { record, final } = outcome;
    const trajectoryPath = outcome.savedTo;
    if (outcome.saveError) services.log.error(`chat: ${outcome.saveError}`);
    stream.markdown(
      `**${escapeMarkdown(label)}** · ${record.protocol.name}` +
        `${earlier.length ? ` (follow-up ${earlier.length + 1})` : ''} · ${escapeMarkdown(model.spec)}\n\n`,
    );
    stream.markdown(turnsMarkdown(record) + '\n' + endMarkdown(record) + '\n\n');

    if (record.finalSql) {
      stream.markdown(codeBlock(record.finalSql, 'sql'));
      if (final) {
        stream.markdown(
          final.ok
            ? resultTable(final.columns, final.rows, final.rowCount)
            : `✗ The final SQL failed (${final.errorClass}): ${escapeMarkdown(final.error ?? '')}\n`,
        );
      }
    }
    if (trajectoryPath) {
      stream.button({
        command: 'quarry.openReplay',
        title: 'Open in Replay',
        arguments: [{ file: trajectoryPath, id: record.id }],
      });
    }
    stream.button({
      command: 'quarry.ask',
      title: 'Ask in the Ask Panel',
      arguments: [{ db: resolved.path, question }],
    });
    const metadata: QuarryChatMetadata = {
      quarry: {
        db: resolved.path,
        question,
        sql: record.finalSql,
        protocol: record.protocol.name,
        trajectoryId: record.id,
        trajectoryPath,
        ...(final ? { result: exchangeResult(final) } : {}),
      },
    };
    return {
      metadata,
      ...(record.end === 'error' ? { errorDetails: { message: record.error ?? 'the episode failed' } } : {}),
    };
  } catch (err) {
    const message =
      (err as Error)?.name === 'AbortError'
        ? 'Cancelled.'
        : `Quarry could not answer: ${(err as Error)?.message ?? String(err)}`;
    services.log.error(`chat: ${message}`);
    return { errorDetails: { message } };
  } finally {
    onCancel.dispose();
    await model?.close().catch(() => {
      /* nothing to free */
    });
  }
}
