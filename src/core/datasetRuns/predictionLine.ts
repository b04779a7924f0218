// The official prediction and gold files hold one query per line, and the official scripts skip blank lines, so a
// query must be kept on one line and an empty answer must still take its line.

/**
 * What an item with no final SQL gets in predictions.sql: a statement SQLite rejects, so it scores wrong under every
 * evaluator (an empty line would be dropped by the official evaluation.py and shift every later prediction).
 */
const NO_ANSWER_PLACEHOLDER = 'SELECT';

/**
 * One-line form of a query: line breaks and tabs (a tab would split the line into fields for the evaluators) become
 * single spaces. A literal holding a newline or tab changes too — the same trade the official prediction files make.
 */
export function oneLine(sql: string): string {
  return sql.replace(/\s*[\r\n\t]+\s*/g, ' ').trim();
}

/** The predictions.sql line of a final answer (null or blank → the placeholder). */
export function predictionLine(finalSql: string | null): string {
  const line = finalSql === null ? '' : oneLine(finalSql);
  return line === '' ? NO_ANSWER_PLACEHOLDER : line;
}
