// The official Spider file formats: gold lines `SQL<TAB>db_id`, prediction lines one SQL each.

export interface GoldLine {
  sql: string;
  dbId: string;
  line: number;
}

/** Lines of a text file without the final newline's empty tail; CRLF tolerated. */
function lines(text: string): string[] {
  const all = text.split(/\r?\n/);
  if (all.length > 0 && all[all.length - 1] === '') all.pop();
  return all;
}

/** Gold entries in file order; blank lines (SParC/CoSQL session breaks) are skipped. Throws on a line without db_id. */
export function parseGold(text: string): GoldLine[] {
  const out: GoldLine[] = [];
  lines(text).forEach((raw, i) => {
    const l = raw.trim();
    if (l === '') return;
    const fields = l.split('\t');
    if (fields.length < 2 || fields[fields.length - 1].trim() === '') {
      throw new Error(`gold line ${i + 1}: expected "SQL<TAB>db_id"`);
    }
    out.push({ sql: fields[0].trim(), dbId: fields[fields.length - 1].trim(), line: i + 1 });
  });
  return out;
}

/** One prediction per line, blank lines kept (an empty prediction is scored wrong, not skipped). */
export function parsePredictions(text: string): string[] {
  return lines(text);
}
