// Numbers the docs quote from bench/results/*.json, checked against those files. The citation form (docs/bench.md,
// "Quoting results in the docs"): a prose sentence or a table row that names `bench/results/NAME.json` quotes
// numbers from that file, and so does every body row of a table whose caption (the last sentence of the paragraph
// right above it) or header names one. Each number written there must be a value of the file — a number anywhere in
// it, strings included — rounded as written (to the decimals shown), in the file's unit or scaled by 1000 or 1024
// once or twice (ms as s, KiB as MiB, bytes as MB) or by 100 (a fraction as a percentage); and each ISO date the
// date of a timestamp in it. Not checked: code spans, link targets, numbers glued to what comes before them (p99,
// Vote@8, §5, Qwen2.5-7B), versions (3.40.1) and references (issue 30, Table 8, App. F). Any other number in a cited
// unit is checked, so a sentence that cites a file keeps numbers from elsewhere (an earlier run, a mean worked out
// by hand) out of it.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DocFile, fencedLines, tables, tableCells } from './markdownDocs';

const MARKER = /bench\/results\/([A-Za-z0-9_-]+)\.json/g;
/** A word that makes the number after it a reference, not a quoted result. */
const REFERENCE = /(?:\b(?:issues?|Tables?|Figures?|Fig\.|Sections?|App\.|Appendix|Algorithm|Eq\.|PR)|#)\s*$/;

/** One cited sentence or table row. */
interface CitedUnit {
  file: string;
  line: number;
  /** Result files it cites, as `bench/results/NAME.json`. */
  results: string[];
  text: string;
}

function markers(text: string): string[] {
  return [...new Set([...text.matchAll(MARKER)].map((m) => m[0]))];
}

/** Sentences of a paragraph: split after . ! ? followed by a space and a capital, a digit or Markdown emphasis. */
function sentences(paragraph: string): string[] {
  return paragraph.split(/(?<=[.!?])\s+(?=[A-Z0-9*_(`])/);
}

/** Every cited unit of a doc. */
export function citedUnits(doc: DocFile): CitedUnit[] {
  const out: CitedUnit[] = [];
  const lines = fencedLines(doc.text);
  // Prose: paragraphs of non-table, non-heading lines outside fences.
  let para: string[] = [];
  let start = 0;
  const flush = () => {
    if (para.length) {
      for (const s of sentences(para.join(' '))) {
        const results = markers(s);
        if (results.length) out.push({ file: doc.path, line: start, results, text: s });
      }
    }
    para = [];
  };
  lines.forEach(({ line, fenced }, i) => {
    const prose = !fenced && line.trim() !== '' && !/^#/.test(line) && !tableCells(line);
    if (!prose) return flush();
    if (para.length === 0) start = i + 1;
    para.push(line.trim());
  });
  flush();
  // Tables: rows that cite, and every row under a citing caption or header.
  for (const t of tables(doc.text)) {
    const caption = sentences(t.above).pop() ?? '';
    const inherited = [...markers(caption), ...markers(t.header.join(' | '))];
    for (const r of t.rows) {
      const text = r.cells.join(' | ');
      const results = [...new Set([...inherited, ...markers(text)])];
      if (results.length) out.push({ file: doc.path, line: r.line, results, text });
    }
  }
  return out;
}

/** The text whose numbers are checked: no code spans, link targets or the markers themselves. */
function checkedText(text: string): string {
  return text
    .replace(/`[^`]*`/g, ' ')
    .replace(/\]\([^)]*\)/g, ']')
    .replace(MARKER, ' ');
}

/** A number as written: its value and how many decimals it shows. */
interface WrittenNumber {
  written: string;
  value: number;
  decimals: number;
  percent: boolean;
}

/** ISO dates (2026-11-25) of a text. */
function writtenDates(text: string): string[] {
  return [...checkedText(text).matchAll(/(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])/g)].map((m) => m[0]);
}

/** Numbers of a text, as the citation form checks them (see the file comment). */
export function writtenNumbers(text: string): WrittenNumber[] {
  const t = checkedText(text).replace(/(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])/g, ' ');
  const re = /(?<![\w.@§#$^\\])(?<![A-Za-z]-)(\d{1,3}(?:[,\u00a0\u2009\u202f]\d{3})+|\d+)(\.\d+)?(?![\w.]*\d)(\s*%)?/gu;
  const out: WrittenNumber[] = [];
  for (const m of t.matchAll(re)) {
    const after = t.slice((m.index ?? 0) + m[0].length);
    // A version (3.40.1) is not a quoted result.
    if (/^\.\d/.test(after)) continue;
    if (REFERENCE.test(t.slice(0, m.index))) continue;
    const intPart = m[1].replace(/[,\u00a0\u2009\u202f]/g, '');
    const decimals = m[2] ? m[2].length - 1 : 0;
    out.push({
      written: m[0].trim(),
      value: Number(intPart + (m[2] ?? '')),
      decimals,
      percent: Boolean(m[3]),
    });
  }
  return out;
}

/** Every number in a JSON value, strings included ("notes": "0.45, 0.48 and 0.52" holds three). */
function fileNumbers(value: unknown, out: number[] = []): number[] {
  if (typeof value === 'number') out.push(value);
  else if (typeof value === 'string') {
    for (const m of value.matchAll(/-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/gi)) out.push(Number(m[0]));
  } else if (Array.isArray(value)) for (const v of value) fileNumbers(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) fileNumbers(v, out);
  return out;
}

/** Every ISO date that starts a string of the file (timestamps such as "at": "2026-11-25T11:26:22.017Z"). */
function fileDates(value: unknown, out = new Set<string>()): Set<string> {
  if (typeof value === 'string') for (const m of value.matchAll(/\d{4}-\d{2}-\d{2}/g)) out.add(m[0]);
  else if (Array.isArray(value)) for (const v of value) fileDates(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) fileDates(v, out);
  return out;
}

function roundTo(v: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(v * f) / f;
}

/** The scalings a quote may apply to a file's value: as is, by 1000 or 1024 once or twice (ms as s, bytes as MB). */
const SCALES = [1, 1e3, 1e-3, 1e6, 1e-6, 1024, 1 / 1024, 1024 ** 2, 1 / 1024 ** 2];

/** Whether a written number is some value of the file, rounded as written, as is or scaled (SCALES, × 100). */
function matches(n: WrittenNumber, values: readonly number[]): boolean {
  const eq = (a: number) => Math.abs(roundTo(Math.abs(a), n.decimals) - n.value) < 1e-9;
  return values.some((v) => SCALES.some((f) => eq(v * f)) || (Math.abs(v) <= 1 && eq(v * 100)));
}

/** What is wrong with a cited unit: numbers and dates none of its result files holds. */
export function citationProblems(root: string, unit: CitedUnit): string[] {
  const values: number[] = [];
  const dates = new Set<string>();
  const problems: string[] = [];
  for (const r of unit.results) {
    const path = join(root, r);
    if (!existsSync(path)) {
      problems.push(`${r} does not exist`);
      continue;
    }
    const data: unknown = JSON.parse(readFileSync(path, 'utf8'));
    fileNumbers(data, values);
    fileDates(data, dates);
  }
  if (problems.length) return problems;
  for (const d of writtenDates(unit.text)) if (!dates.has(d)) problems.push(`the date ${d}`);
  for (const n of writtenNumbers(unit.text)) if (!matches(n, values)) problems.push(n.written);
  return problems;
}
