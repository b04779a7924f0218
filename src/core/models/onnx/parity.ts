// Greedy parity between a model's trainer framework and its ONNX export: the reference side (transformers, in
// Python) writes each case's prompt messages and the token ids it decoded greedily; this decodes the same messages
// with the onnx backend and compares token for token, naming the first position where they part.
import type { ChatMessage } from '../types';
import type { OnnxChatModel } from './index';

/** One reference case, as quarry_trainer.parity and a model folder's reference.json write it. */
interface ParityCase {
  messages: ChatMessage[];
  max_new_tokens: number;
  /** The reference's greedy ids; the end-of-sequence id that ended decoding, if one did, is the last. */
  output_ids: number[];
}

export interface ParityReference {
  stop_ids: number[];
  cases: ParityCase[];
}

export interface ParityOutcome {
  index: number;
  equal: boolean;
  /** The first position where the two differ (or where one ends before the other), null when equal. */
  firstDivergence: { position: number; expected: number | null; got: number | null } | null;
  expected: number[];
  got: number[];
}

/** Reference ids without the end-of-sequence id that ended them (the onnx backend reports ids without it). */
function withoutStop(ids: number[], stopIds: readonly number[]): number[] {
  return ids.length > 0 && stopIds.includes(ids[ids.length - 1]) ? ids.slice(0, -1) : ids;
}

export function compareTokens(expected: number[], got: number[]): ParityOutcome['firstDivergence'] {
  const n = Math.max(expected.length, got.length);
  for (let i = 0; i < n; i++) {
    if (expected[i] !== got[i]) return { position: i, expected: expected[i] ?? null, got: got[i] ?? null };
  }
  return null;
}

/** Checks that `reference` is a parity reference; returns the problem or null. */
export function parityReferenceProblem(v: unknown): string | null {
  const r = v as Partial<ParityReference> | null;
  if (!r || typeof r !== 'object') return 'not a JSON object';
  if (!Array.isArray(r.stop_ids) || !r.stop_ids.every(Number.isInteger)) return 'stop_ids must be a list of token ids';
  if (!Array.isArray(r.cases) || r.cases.length === 0) return 'cases must be a non-empty list';
  for (const [i, c] of r.cases.entries()) {
    if (
      !c ||
      !Array.isArray(c.messages) ||
      !c.messages.every((m) => m && typeof m.role === 'string' && typeof m.content === 'string')
    ) {
      return `case ${i}: messages must be a list of {role, content}`;
    }
    if (!Number.isInteger(c.max_new_tokens) || c.max_new_tokens <= 0)
      return `case ${i}: max_new_tokens must be a positive integer`;
    if (!Array.isArray(c.output_ids) || !c.output_ids.every(Number.isInteger))
      return `case ${i}: output_ids must be token ids`;
  }
  return null;
}

/** Decodes every case greedily with `model` and compares with the reference. */
export async function checkParity(
  model: OnnxChatModel,
  reference: ParityReference,
  signal?: AbortSignal,
): Promise<ParityOutcome[]> {
  const out: ParityOutcome[] = [];
  for (const [index, c] of reference.cases.entries()) {
    const r = await model.generate({
      messages: c.messages,
      sampling: { temperature: 0, maxTokens: c.max_new_tokens },
      signal,
    });
    const expected = withoutStop(c.output_ids, reference.stop_ids);
    const firstDivergence = compareTokens(expected, r.tokens);
    out.push({ index, equal: firstDivergence === null, firstDivergence, expected, got: r.tokens });
  }
  return out;
}
