// A reviewer's label on one trajectory, as the label store keeps it and the exporters read it.

export type Verdict = 'correct' | 'incorrect' | 'unsure';
export const VERDICTS: readonly Verdict[] = ['correct', 'incorrect', 'unsure'];

/** Failure modes every store starts with; reviewers add their own (the store's tags table). */
export const BUILTIN_TAGS: readonly string[] = [
  'overconfidence',
  'loop',
  'schema hallucination',
  'wrong join',
  'aggregation drift',
  'value mismatch',
  'format',
];

/** What a reviewer sets; everything but the trajectory id may be empty. */
export interface LabelInput {
  trajectoryId: string;
  /** The trajectory file the label was made from (absolute path), so a tool can go back to it. */
  file: string;
  /** recordSha(record) when labeled: tells a reader whether the trajectory changed since. */
  recordSha: string;
  verdict: Verdict | null;
  /** SQL the reviewer says answers the question (empty/null: none given). */
  correctedSql: string | null;
  tags: string[];
  note: string;
  /** Who labeled (default: the OS user name). */
  labeler?: string;
}

export interface Label extends Required<LabelInput> {
  /** ISO-8601 time of the last save. */
  updatedAt: string;
}

export function isVerdict(v: unknown): v is Verdict {
  return typeof v === 'string' && (VERDICTS as readonly string[]).includes(v);
}

/** A corrected SQL that counts: non-blank. */
export function hasCorrection(
  label: Pick<Label, 'correctedSql'> | null | undefined,
): label is Pick<Label, 'correctedSql'> & { correctedSql: string } {
  return !!label && typeof label.correctedSql === 'string' && label.correctedSql.trim() !== '';
}
