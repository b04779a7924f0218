// Shared by the env and loop tests: an in-process scripted ChatModel and a minimal tag protocol. The env and loop are
// protocol-agnostic, so a small protocol written for the tests exercises them without depending on the paper ports.
import type { ChatModel, GenerateRequest, GenerateResult } from '../../../src/core/models/types';
import { ModelError } from '../../../src/core/models/types';
import type { Protocol, ProtocolSession, ProtocolContext } from '../../../src/core/agent/protocol';
import type { ParsedAction } from '../../../src/core/agent/types';
import { renderObservation } from '../../../src/core/db/observation';

/** One scripted reply: text to return, an error to throw, or a hang that only an abort ends. */
export type Script =
  | string
  | { text: string; stopString?: string | null; finishReason?: GenerateResult['finishReason']; chunks?: number }
  | { error: Error }
  | { hang: true; partial?: string; ignoreAbort?: boolean };

export interface ScriptedModel extends ChatModel {
  /** Every request the model saw, in order. */
  readonly requests: GenerateRequest[];
}

/**
 * A ChatModel that replays scripted replies like an OpenAI-compatible server does: it stops at the first stop string
 * in the text and returns the text without it, reporting which one it was. Streams the text in a few chunks.
 */
export function scriptedModel(script: Script[], spec = 'scripted:test'): ScriptedModel {
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
          const abort = () => { const e = new Error('aborted'); e.name = 'AbortError'; reject(e); };
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
          if (i >= 0 && (at < 0 || i < at)) { at = i; stopString = s; }
        }
        if (at >= 0) text = text.slice(0, at);
      }
      const chunks = Math.max(1, spec$.chunks ?? 3);
      const size = Math.ceil(text.length / chunks) || 1;
      for (let i = 0; i < text.length; i += size) req.onText?.(text.slice(i, i + size));
      return {
        text, finishReason, stopString,
        usage: { promptTokens: req.messages.reduce((n, m) => n + m.content.length, 0), completionTokens: text.length },
        timings: { totalMs: 0, firstTokenMs: 0 },
      };
    },
  };
}

function block(text: string, tag: string): string | null {
  const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(text);
  return m ? m[1].trim() : null;
}

/**
 * `<sql>…</sql>` runs a query, `<solution>…</solution>` answers, anything else is invalid. With `finalCall: true` in
 * its config it asks for one last answer when the budget runs out; with `endOnInvalid: true` an invalid turn ends.
 */
export const tagProtocol: Protocol = {
  name: 'skyrl',
  defaults: { maxTurns: 3 },
  create(ctx: ProtocolContext): ProtocolSession {
    return {
      start: () => [
        { role: 'system', content: `Tables: ${ctx.schema.tables.map((t) => t.name).join(', ')}` },
        { role: 'user', content: ctx.task.question },
      ],
      stop: () => ['</sql>', '</solution>'],
      restoreStop: (text, stopString, finishReason) => (finishReason === 'stop' && stopString ? text + stopString : text),
      parse(text): ParsedAction {
        const solution = block(text, 'solution');
        if (solution !== null) return { kind: 'answer', sql: solution, thought: null, mdp: ['FINALIZE'], problems: [] };
        const sql = block(text, 'sql');
        if (sql !== null) return { kind: 'execute', sql, thought: null, mdp: ['EXECUTE'], problems: [] };
        return { kind: 'invalid', sql: null, thought: null, mdp: [], problems: ['no <sql> or <solution> block'] };
      },
      respond(action, exec, turnsLeft) {
        if (action.kind === 'answer') return { observations: [], done: true, end: 'answer', finalSql: action.sql };
        if (action.kind === 'invalid' && ctx.config.endOnInvalid === true) return { observations: [], done: true, end: 'invalid', finalSql: null };
        const body = exec ? renderObservation(exec, { format: 'df' }) : 'Your previous action is invalid.';
        return { observations: [{ role: 'user', content: `<observation>${body}\n${turnsLeft} turns left</observation>` }], done: false, end: null, finalSql: null };
      },
      finalCall: () => (ctx.config.finalCall === true ? { role: 'user', content: 'Give the final <solution> now.' } : null),
    };
  },
};
