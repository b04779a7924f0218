// SFT examples from labeled trajectories: the chat as the model saw and wrote it, each message flagged with whether
// it carries loss. Only the model's own turns (assistant) do; the prompt and every observation never do. Only
// trajectories a reviewer marked correct, or gave a corrected SQL for, become examples. docs/editor.md ("Labeling")
// describes the format.
import type { ChatRole } from '../models/types';
import type { TrajectoryRecord } from '../trajectories/types';
import { rewriteAnswerTurn, answerBlock } from './answerFormat';
import { hasCorrection, type Label } from './types';
import { recordSha } from './recordSha';

export const SFT_SCHEMA = 'quarry.sft/1';

interface SftMessage {
  role: ChatRole;
  content: string;
  /** True for the model's own turns (role assistant): train on these tokens; false for prompts and observations. */
  loss: boolean;
}

export interface SftExample {
  schema: typeof SFT_SCHEMA;
  /** The trajectory's id. */
  id: string;
  protocol: TrajectoryRecord['protocol']['name'];
  question: string;
  db: { path: string; id: string | null };
  /** `as-generated`: the trajectory as the model wrote it (labeled correct); `corrected`: its answer replaced. */
  source: 'as-generated' | 'corrected';
  verdict: Label['verdict'];
  tags: string[];
  messages: SftMessage[];
}

export interface SftOptions {
  /**
   * With a corrected SQL, keep the text the model wrote before its answer block (its reasoning) in the rewritten
   * final turn (default false: the final turn is the answer block alone, so no reasoning argues for the old SQL).
   */
  keepReasoning?: boolean;
}

type SftOutcome = { ok: true; example: SftExample } | { ok: false; reason: string };

const msg = (role: ChatRole, content: string): SftMessage => ({ role, content, loss: role === 'assistant' });

/**
 * One trajectory and its label → an SFT example, or why not.
 * - verdict correct, no corrected SQL: the whole chat as generated (needs an answered episode);
 * - a corrected SQL (any verdict): if the last turn is the model's answer, that turn is rewritten (its answer block
 *   replaced by the protocol's answer block with the corrected SQL; see SftOptions.keepReasoning) and its
 *   observations dropped; otherwise (budget ran out, invalid action, error) every turn is kept and one assistant
 *   message with the answer block is appended.
 */
export function toSftExample(
  record: TrajectoryRecord,
  label: Label | null | undefined,
  opts: SftOptions = {},
): SftOutcome {
  if (!label) return { ok: false, reason: 'not labeled' };
  if (label.recordSha && label.recordSha !== recordSha(record))
    return { ok: false, reason: 'the trajectory changed since it was labeled (record fingerprint differs)' };
  const corrected = hasCorrection(label) ? label.correctedSql : null;
  if (corrected === null && label.verdict !== 'correct') {
    return {
      ok: false,
      reason:
        label.verdict === null ? 'no verdict and no corrected SQL' : `labeled ${label.verdict} without a corrected SQL`,
    };
  }
  if (corrected === null && (record.end !== 'answer' || record.turns.length === 0)) {
    return {
      ok: false,
      reason: `labeled correct, but the episode ended without an answer (${record.end}) and no corrected SQL was given`,
    };
  }
  const turns = record.turns;
  const last = turns[turns.length - 1];
  const rewriteLast = corrected !== null && last !== undefined && last.action.kind === 'answer';
  const keep = opts.keepReasoning === true;
  const rewrite = (text: string) => rewriteAnswerTurn(record.protocol.name, text, corrected ?? '', keep);
  const messages = chat(record, rewriteLast ? rewrite : null);
  if (corrected !== null && !rewriteLast) messages.push(msg('assistant', answerBlock(record.protocol.name, corrected)));
  const source = corrected !== null ? 'corrected' : 'as-generated';
  return { ok: true, example: example(record, source, label.verdict, label.tags, messages) };
}

/**
 * An unlabeled trajectory as an SFT example, exactly as generated (verdict null, no tags): for callers that judged
 * it some other way (`quarry data sft` checks the final SQL against the gold). It needs an answered episode.
 */
export function asGeneratedExample(record: TrajectoryRecord): SftOutcome {
  if (record.end !== 'answer' || record.turns.length === 0) {
    return { ok: false, reason: `the episode ended without an answer (${record.end})` };
  }
  return { ok: true, example: example(record, 'as-generated', null, [], chat(record, null)) };
}

/**
 * The chat as the model saw and wrote it, each message with its loss flag; `rewriteLast` replaces the last turn's
 * text (whose observations are then dropped).
 */
function chat(record: TrajectoryRecord, rewriteLast: ((text: string) => string) | null): SftMessage[] {
  const messages: SftMessage[] = record.prompt.map((m) => msg(m.role, m.content));
  const turns = record.turns;
  turns.forEach((t, i) => {
    if (rewriteLast && i === turns.length - 1) {
      messages.push(msg('assistant', rewriteLast(t.assistant)));
      return;
    }
    messages.push(msg('assistant', t.assistant));
    // Observations never carry loss, even text the environment wrote into the model's rollout (MTIR-SQL's rethink).
    for (const o of t.observations) messages.push({ role: o.role, content: o.content, loss: false });
  });
  return messages;
}

function example(
  record: TrajectoryRecord,
  source: SftExample['source'],
  verdict: SftExample['verdict'],
  tags: string[],
  messages: SftMessage[],
): SftExample {
  return {
    schema: SFT_SCHEMA,
    id: record.id,
    protocol: record.protocol.name,
    question: record.task.question,
    db: { path: record.task.db.path, id: record.task.db.id },
    source,
    verdict,
    tags,
    messages,
  };
}
