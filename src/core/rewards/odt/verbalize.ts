// The next-turn feedback text (App. F, "User Prompt — Round 2+ (ODT Feedback Injection)"), quoted exactly:
//   Feedback: your previous SQL has structural issues: {error_codes}, {error_descriptions} . Revise your previous
//   answer using these issues. Revise your previous answer for SQLite. Put step-by-step reasoning inside
//   <think>...</think>, then output exactly one corrected SQLite query inside <sql>...</sql>. Do not output any text
//   outside those tags.
// {error_codes} are the tags joined by ", " (as App. G prints them); {error_descriptions} are their Table 7 meanings
// joined by spaces, the last one without its full stop because the template supplies " .".
// App. D's fallback ("a generic feedback message asking the model to first fix syntax and identifier errors") is not
// quoted in the paper; FALLBACK_FEEDBACK is our wording of it, ending with the template's fixed instructions.
import { TAG_MEANINGS } from './tags';
import type { OdtTag } from './types';

const INSTRUCTIONS =
  'Revise your previous answer for SQLite. Put step-by-step reasoning inside <think>...</think>, ' +
  'then output exactly one corrected SQLite query inside <sql>...</sql>. Do not output any text outside those tags.';

export const FALLBACK_FEEDBACK =
  'Feedback: your previous SQL could not be parsed for structural comparison. ' +
  `First fix syntax and identifier errors. ${INSTRUCTIONS}`;

/** The App. F feedback for a non-empty tag list. */
export function verbalizeTags(tags: readonly OdtTag[]): string {
  if (tags.length === 0) throw new Error('verbalizeTags needs at least one tag');
  const codes = tags.join(', ');
  const descriptions = tags
    .map((t) => TAG_MEANINGS[t])
    .join(' ')
    .replace(/\.$/, '');
  return (
    `Feedback: your previous SQL has structural issues: ${codes}, ${descriptions} . Revise your previous ` +
    `answer using these issues. ${INSTRUCTIONS}`
  );
}
