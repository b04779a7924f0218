// The project's prose docs (README.md and docs/*.md) read as the docs-drift tests need them: whole files, sections
// under their headings, table rows, and the prose sentences and tables a citation of a result file covers.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DocFile {
  /** Relative to the repository root, with forward slashes: `README.md`, `docs/bench.md`. */
  path: string;
  text: string;
}

/** A heading and the text under it up to the next heading of any level. */
export interface Section {
  file: string;
  heading: string;
  /** 1-based line of the heading (1 for text before the first heading). */
  line: number;
  text: string;
}

/** README.md and every docs/*.md, in a fixed order. */
export function readDocs(root: string): DocFile[] {
  const names = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...names].map((path) => ({ path, text: readFileSync(join(root, path), 'utf8') }));
}

/** Lines with a flag saying whether each is inside a fenced code block (the fence lines count as inside). */
export function fencedLines(text: string): { line: string; fenced: boolean }[] {
  let inFence = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      return { line, fenced: true };
    }
    return { line, fenced: inFence };
  });
}

/** Splits a file at its headings (`#` to `######` outside code fences). */
export function sections(doc: DocFile): Section[] {
  const out: Section[] = [];
  let current: Section = { file: doc.path, heading: '(top)', line: 1, text: '' };
  fencedLines(doc.text).forEach(({ line, fenced }, i) => {
    const h = fenced ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (h) {
      out.push(current);
      current = { file: doc.path, heading: h[1].trim(), line: i + 1, text: '' };
    } else {
      current.text += line + '\n';
    }
  });
  out.push(current);
  return out;
}

/** The section of `doc` whose heading is `heading` (exactly), or undefined. */
export function sectionNamed(doc: DocFile, heading: string): Section | undefined {
  return sections(doc).find((s) => s.heading === heading);
}

/** The cells of a Markdown table row (`| a | b \| c |` → ['a', 'b | c']), or null when the line is not a row. */
export function tableCells(line: string): string[] | null {
  const t = line.trim();
  if (!t.startsWith('|')) return null;
  const cells = t
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim().replace(/\\\|/g, '|'));
  return cells;
}

/** Whether a row is a table's delimiter row (`|---|:---:|`). */
function isDelimiterRow(cells: string[]): boolean {
  return cells.every((c) => /^:?-{3,}:?$/.test(c));
}

/** A table: its header cells, its body rows with their 1-based lines, and the prose line just above it. */
interface Table {
  header: string[];
  rows: { cells: string[]; line: number }[];
  /** 1-based line of the header row. */
  line: number;
  /** The paragraph right above the table (blank lines between allowed), '' when a heading or table comes first. */
  above: string;
}

/** Every table of a text (outside code fences). */
export function tables(text: string): Table[] {
  const lines = fencedLines(text);
  const out: Table[] = [];
  for (let i = 0; i < lines.length; i++) {
    const header = lines[i].fenced ? null : tableCells(lines[i].line);
    const delim = i + 1 < lines.length && !lines[i + 1].fenced ? tableCells(lines[i + 1].line) : null;
    if (!header || !delim || !isDelimiterRow(delim)) continue;
    let j = i - 1;
    while (j >= 0 && lines[j].line.trim() === '') j--;
    const paragraph: string[] = [];
    for (; j >= 0 && !lines[j].fenced && lines[j].line.trim() !== ''; j--) {
      if (/^#/.test(lines[j].line) || tableCells(lines[j].line)) break;
      paragraph.unshift(lines[j].line.trim());
    }
    const table: Table = { header, rows: [], line: i + 1, above: paragraph.join(' ') };
    let k = i + 2;
    for (; k < lines.length && !lines[k].fenced; k++) {
      const cells = tableCells(lines[k].line);
      if (!cells) break;
      table.rows.push({ cells, line: k + 1 });
    }
    out.push(table);
    i = k - 1;
  }
  return out;
}

/** 1-based line of character offset `at` in `text`. */
export function lineOf(text: string, at: number): number {
  let n = 1;
  for (let i = 0; i < at && i < text.length; i++) if (text[i] === '\n') n++;
  return n;
}
