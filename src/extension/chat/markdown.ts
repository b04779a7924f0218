// How an episode reads in VS Code's chat view: one line per turn, the final SQL in a fenced block, the result as a
// Markdown table of its first rows. Pure (no `vscode`), so it is unit-tested. Model-written text is escaped: the
// chat renders Markdown, and a turn must not be able to inject links or close our code fences.
import type { TrajectoryRecord } from '../../core/trajectories/types';
import type { Cell } from '../../core/db/types';
import { cellText, type WireCell } from '../../core/db/resultExport';

/** Rows of the result the chat shows; the rest is a count and the Ask panel's grid. */
export const CHAT_RESULT_ROWS = 10;

/** Escapes what could turn text that is not ours into emphasis, code, links, HTML or table cells mid-line. */
export function escapeMarkdown(s: string): string {
  return s.replace(/[\\`*_[\]<>|~]/g, (c) => `\\${c}`);
}

/** An inline code span that holds any text: the fence is longer than any backtick run inside. */
export function inlineCode(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  const longest = Math.max(0, ...(flat.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

/** A fenced code block that holds any text, in a given language. */
export function codeBlock(s: string, lang = ''): string {
  const longest = Math.max(2, ...(s.match(/`{3,}/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}${lang}\n${s.replace(/\n+$/, '')}\n${fence}\n`;
}

function short(sql: string, max = 120): string {
  const flat = sql.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

/** One line per turn: what the model did and what came of it. */
export function turnsMarkdown(r: TrajectoryRecord): string {
  const lines: string[] = [];
  for (const t of r.turns) {
    const head = `${t.index + 1}. `;
    const a = t.action;
    let what: string;
    if (a.kind === 'execute' && a.sql !== null) {
      const e = t.exec;
      const outcome = !e
        ? 'not run'
        : e.ok
          ? `${e.rowCount} row${e.rowCount === 1 ? '' : 's'}`
          : `✗ ${escapeMarkdown(`${e.errorClass}: ${e.error ?? ''}`)}`;
      what = `runs ${inlineCode(short(a.sql))} → ${outcome}`;
    } else if (a.kind === 'memory') {
      what = 'checks the SQL against the conversation so far';
    } else if (a.kind === 'answer') {
      what = 'answers';
    } else {
      what = `✗ invalid turn: ${escapeMarkdown(a.problems.join('; ') || 'no action found')}`;
    }
    lines.push(head + what);
  }
  return lines.join('\n') + (lines.length ? '\n' : '');
}

/** A one-line verdict on how the episode ended. */
export function endMarkdown(r: TrajectoryRecord): string {
  const turns = `${r.turns.length} turn${r.turns.length === 1 ? '' : 's'}`;
  switch (r.end) {
    case 'answer':
      return `Answered in ${turns} (${(r.timings.totalMs / 1000).toFixed(1)} s).`;
    case 'budget':
      return r.finalSql
        ? `The turn budget ran out after ${turns}; this is the last SQL it proposed.`
        : `No answer within the turn budget (${turns}).`;
    case 'invalid':
      return `The episode ended on an invalid turn after ${turns}.`;
    case 'cancelled':
      return `Stopped after ${turns}.`;
    case 'error':
      return `Failed after ${turns}: ${escapeMarkdown(r.error ?? 'unknown error')}`;
  }
}

function tableCell(c: Cell | WireCell): string {
  if (c === null) return '*NULL*';
  const text = cellText(c).replace(/\s+/g, ' ');
  return escapeMarkdown(text.length > 80 ? text.slice(0, 79) + '…' : text) || ' ';
}

/** The first rows as a Markdown table, with a line saying how many there are in all. */
export function resultTable(
  columns: readonly string[],
  rows: readonly (readonly (Cell | WireCell)[])[],
  rowCount = rows.length,
  max = CHAT_RESULT_ROWS,
): string {
  if (columns.length === 0) return '*The query returned no columns.*\n';
  const head =
    `| ${columns.map((c) => escapeMarkdown(c) || ' ').join(' | ')} |\n` + `|${columns.map(() => ' --- ').join('|')}|\n`;
  const body = rows
    .slice(0, max)
    .map((r) => `| ${columns.map((_, i) => tableCell(r[i] ?? null)).join(' | ')} |\n`)
    .join('');
  const shown = Math.min(rows.length, max);
  const note =
    rowCount === 0
      ? '*No rows.*\n'
      : shown < rowCount
        ? `*First ${shown} of ${rowCount} rows.*\n`
        : `*${rowCount} row${rowCount === 1 ? '' : 's'}.*\n`;
  return (rowCount === 0 ? '' : head + body + '\n') + note;
}
