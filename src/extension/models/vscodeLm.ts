// The `vscode-lm` backend: any chat model VS Code offers (Copilot or another language-model provider) behind the
// core's ChatModel interface, so the agent loop runs against it unchanged. VS Code's API has no system role, no stop
// strings and no token counts in the response: the system prompt is folded into the first user message, stop strings
// are cut here (and the request cancelled as soon as one appears), and usage is estimated.
import * as vscode from 'vscode';
import type { ChatModel, GenerateRequest, GenerateResult } from '../../core/models/types';
import { ModelError } from '../../core/models/types';
import { estimateUsage } from '../../core/models/openai';
import { StopCutter } from '../../core/models/stops';
import { foldForLanguageModel } from './lmMessages';

const VSCODE_LM_SPEC_PREFIX = 'vscode-lm:';

const JUSTIFICATION = 'Quarry asks the model to write SQL for your question about a database in this workspace.';

function abortError(): Error {
  const err = new Error('the model call was cancelled');
  err.name = 'AbortError';
  return err;
}

/** What a person reads for a model: "Copilot · GPT-4o". */
export function describeLmModel(chat: vscode.LanguageModelChat): string {
  return `${chat.vendor} · ${chat.name}`;
}

/**
 * The chat model named by `name` (an id, a family or a display name; '' takes the first). Throws a ModelError that
 * says what to do when VS Code offers none, or none by that name.
 */
export async function selectLmModel(name: string): Promise<vscode.LanguageModelChat> {
  if (!vscode.lm || typeof vscode.lm.selectChatModels !== 'function') {
    throw new ModelError(
      'load',
      'this editor has no language-model API (vscode.lm); choose the openai or onnx backend',
    );
  }
  const all = await vscode.lm.selectChatModels();
  if (all.length === 0) {
    throw new ModelError(
      'unknown-model',
      'VS Code offers no chat model: install and sign in to a language-model provider (e.g. GitHub Copilot Chat), ' +
        'or switch the backend to openai or onnx (Quarry: Switch Model…)',
    );
  }
  if (name === '') return all[0];
  const wanted = name.toLowerCase();
  const hit =
    all.find((m) => m.id === name) ??
    all.find((m) => m.family.toLowerCase() === wanted) ??
    all.find((m) => m.name.toLowerCase() === wanted);
  if (!hit) {
    const offered = all.map((m) => m.id).join(', ');
    throw new ModelError(
      'unknown-model',
      `VS Code offers no chat model called ${JSON.stringify(name)}; available: ${offered}`,
    );
  }
  return hit;
}

/** Maps what vscode.lm throws to the core's error kinds, so every backend's failures read alike. */
function toModelError(err: unknown, label: string): unknown {
  if (err instanceof ModelError || (err instanceof Error && err.name === 'AbortError')) return err;
  if (err instanceof vscode.LanguageModelError) {
    const why = err.message || err.code;
    if (err.code === vscode.LanguageModelError.NoPermissions.name) {
      return new ModelError(
        'auth',
        `${label} refused the request: Quarry has not been allowed to use it (${why}); allow it when VS Code asks`,
      );
    }
    if (err.code === vscode.LanguageModelError.Blocked.name) {
      return new ModelError('rate-limit', `${label} is blocked for now, e.g. a quota ran out (${why})`);
    }
    if (err.code === vscode.LanguageModelError.NotFound.name) {
      return new ModelError(
        'unknown-model',
        `${label} is no longer available (${why}); pick another with Quarry: Switch Model…`,
      );
    }
    return new ModelError('server', `${label} failed: ${why}`);
  }
  return new ModelError('server', `${label} failed: ${err instanceof Error ? err.message : String(err)}`);
}

/** `label` says which VS Code model it is, for the status bar. */
export function createVscodeLmModel(chat: vscode.LanguageModelChat): ChatModel & { readonly label: string } {
  const label = describeLmModel(chat);
  return {
    spec: VSCODE_LM_SPEC_PREFIX + chat.id,
    label,
    async generate(req: GenerateRequest): Promise<GenerateResult> {
      if (req.signal?.aborted) throw abortError();
      const started = performance.now();
      let firstTokenAt: number | null = null;
      const cts = new vscode.CancellationTokenSource();
      let timedOut = false;
      const onAbort = (): void => cts.cancel();
      req.signal?.addEventListener('abort', onAbort, { once: true });
      const timer =
        req.timeoutMs && req.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              cts.cancel();
            }, req.timeoutMs)
          : undefined;
      const cutter = new StopCutter(req.sampling.stop ?? []);
      // VS Code reports no token counts; maxTokens is honoured approximately, at about 4 characters a token.
      const maxChars = req.sampling.maxTokens && req.sampling.maxTokens > 0 ? req.sampling.maxTokens * 4 : Infinity;
      let text = '';
      let stopString: string | null = null;
      let finishReason: GenerateResult['finishReason'] = 'stop';
      const emit = (piece: string): void => {
        if (piece === '') return;
        text += piece;
        req.onText?.(piece);
      };
      try {
        const messages = foldForLanguageModel(req.messages).map((t) =>
          t.role === 'assistant'
            ? vscode.LanguageModelChatMessage.Assistant(t.content)
            : vscode.LanguageModelChatMessage.User(t.content),
        );
        const modelOptions: Record<string, unknown> = {};
        if (req.sampling.temperature !== undefined) modelOptions.temperature = req.sampling.temperature;
        if (req.sampling.topP !== undefined) modelOptions.top_p = req.sampling.topP;
        const response = await chat.sendRequest(messages, { justification: JUSTIFICATION, modelOptions }, cts.token);
        for await (const delta of response.text) {
          if (cts.token.isCancellationRequested) break;
          firstTokenAt ??= performance.now();
          const { emit: safe, stop } = cutter.push(delta);
          emit(safe);
          if (stop !== null) {
            stopString = stop;
            cts.cancel(); // the rest of the answer is not wanted: stop paying for it
            break;
          }
          if (text.length >= maxChars) {
            finishReason = 'length';
            cts.cancel();
            break;
          }
        }
        if (stopString === null && finishReason === 'stop') emit(cutter.flush());
      } catch (err) {
        if (req.signal?.aborted) throw abortError();
        if (timedOut) throw new ModelError('timeout', `${label} did not finish within ${req.timeoutMs} ms`);
        throw toModelError(err, label);
      } finally {
        if (timer) clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        cts.dispose();
      }
      if (req.signal?.aborted) throw abortError();
      if (timedOut) throw new ModelError('timeout', `${label} did not finish within ${req.timeoutMs} ms`);
      return {
        text,
        finishReason,
        stopString,
        ...(stopString !== null ? { stopStringSource: 'client' as const } : {}),
        usage: estimateUsage(req.messages, text),
        usageEstimated: true,
        timings: {
          totalMs: performance.now() - started,
          firstTokenMs: firstTokenAt === null ? null : firstTokenAt - started,
        },
      };
    },
    async close(): Promise<void> {
      /* VS Code owns the model; nothing to free */
    },
  };
}
