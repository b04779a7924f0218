// An in-process ChatModel that replays scripted replies the way an OpenAI-compatible server would (cut at the first
// stop string, which it names). Shared by unit, integration and e2e tests that need real episodes without a server.
import type { ChatModel, GenerateRequest, GenerateResult, TokenUsage } from '../../src/core/models/types';
import { ModelError } from '../../src/core/models/types';

/** One scripted reply: text to return, an error to throw, or a hang that only an abort ends. */
export type Script =
  | string
  | { text: string; stopString?: string | null; finishReason?: GenerateResult['finishReason']; chunks?: number }
  | { error: Error }
  | { hang: true; partial?: string; ignoreAbort?: boolean };

interface ScriptedModel extends ChatModel {
  /** Every request the model saw, in order. */
  readonly requests: GenerateRequest[];
}

/**
 * A ChatModel that replays scripted replies like an OpenAI-compatible server does: it stops at the first stop string
 * in the text and returns the text without it, reporting which one it was. Streams the text in a few chunks.
 */
interface ScriptedOptions {
  /** Token counts to report for reply number `n` (1-based); by default characters of the prompt and the reply. */
  usage?: (req: GenerateRequest, text: string, n: number) => TokenUsage;
}

export function scriptedModel(script: Script[], spec = 'scripted:test', opts: ScriptedOptions = {}): ScriptedModel {
  const requests: GenerateRequest[] = [];
  let next = 0;
  return {
    spec,
    requests,
    async close() {},
    async generate(req) {
      requests.push(req);
      const item = script[next++];
      if (item === undefined) throw new ModelError('server', `the script has no reply #${next}`);
      if (typeof item === 'object' && 'error' in item) throw item.error;
      if (typeof item === 'object' && 'hang' in item) {
        if (item.partial) req.onText?.(item.partial);
        return new Promise<GenerateResult>((_, reject) => {
          if (item.ignoreAbort) return;
          const abort = () => {
            const e = new Error('aborted');
            e.name = 'AbortError';
            reject(e);
          };
          if (req.signal?.aborted) abort();
          req.signal?.addEventListener('abort', abort, { once: true });
        });
      }
      const spec$ = typeof item === 'string' ? { text: item } : item;
      let text = spec$.text;
      let stopString: string | null = spec$.stopString ?? null;
      const finishReason = spec$.finishReason ?? 'stop';
      if (spec$.stopString === undefined) {
        // Cut at the earliest stop string, as a server would.
        let at = -1;
        for (const s of req.sampling.stop ?? []) {
          const i = text.indexOf(s);
          if (i >= 0 && (at < 0 || i < at)) {
            at = i;
            stopString = s;
          }
        }
        if (at >= 0) text = text.slice(0, at);
      }
      const chunks = Math.max(1, spec$.chunks ?? 3);
      const size = Math.ceil(text.length / chunks) || 1;
      for (let i = 0; i < text.length; i += size) req.onText?.(text.slice(i, i + size));
      return {
        text,
        finishReason,
        stopString,
        usage: opts.usage?.(req, text, next) ?? {
          promptTokens: req.messages.reduce((n, m) => n + m.content.length, 0),
          completionTokens: text.length,
        },
        timings: { totalMs: 0, firstTokenMs: 0 },
      };
    },
  };
}
