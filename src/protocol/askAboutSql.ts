// "Ask about This SQL": the question the user typed and the SQL they selected go to the agent as one text (the agent
// needs both); the Ask panel's card splits them again, so its title is the question and the SQL shows apart, as code.
// Nothing here imports `vscode` or the DOM.

const MARKER = '\n\nThe SQL in question:\n';

/** The text the agent is asked: the question, then the SQL after a fixed line. */
export function questionWithSql(question: string, sql: string): string {
  return `${question.trim()}${MARKER}${sql}`;
}

/** A card's question split back into its title and the SQL it was asked about (null when it carries none). */
export function splitQuestion(text: string): { title: string; sql: string | null } {
  const at = text.indexOf(MARKER);
  if (at < 0) return { title: text, sql: null };
  return { title: text.slice(0, at), sql: text.slice(at + MARKER.length) };
}
