// Shared by the env and loop tests: an in-process scripted ChatModel and a minimal tag protocol. The env and loop are
// protocol-agnostic, so a small protocol written for the tests exercises them without depending on the paper ports.
import type { Protocol, ProtocolSession, ProtocolContext } from '../../../src/core/agent/protocol';
import type { ParsedAction } from '../../../src/core/agent/types';
import { renderObservation } from '../../../src/core/db/observation';

export { scriptedModel, type Script } from '../../support/scriptedModel';

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
      restoreStop: (text, stopString, finishReason) =>
        finishReason === 'stop' && stopString ? text + stopString : text,
      parse(text): ParsedAction {
        const solution = block(text, 'solution');
        if (solution !== null) return { kind: 'answer', sql: solution, thought: null, mdp: ['FINALIZE'], problems: [] };
        const sql = block(text, 'sql');
        if (sql !== null) return { kind: 'execute', sql, thought: null, mdp: ['EXECUTE'], problems: [] };
        return { kind: 'invalid', sql: null, thought: null, mdp: [], problems: ['no <sql> or <solution> block'] };
      },
      respond(action, exec, turnsLeft) {
        if (action.kind === 'answer') return { observations: [], done: true, end: 'answer', finalSql: action.sql };
        if (action.kind === 'invalid' && ctx.config.endOnInvalid === true)
          return { observations: [], done: true, end: 'invalid', finalSql: null };
        const body = exec ? renderObservation(exec, { format: 'df' }) : 'Your previous action is invalid.';
        return {
          observations: [{ role: 'user', content: `<observation>${body}\n${turnsLeft} turns left</observation>` }],
          done: false,
          end: null,
          finalSql: null,
        };
      },
      finalCall: () =>
        ctx.config.finalCall === true ? { role: 'user', content: 'Give the final <solution> now.' } : null,
    };
  },
};
