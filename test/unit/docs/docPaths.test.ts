// Tests of unit/docs/docPaths: the repository paths the docs name exist (a test, a benchmark, a source file moved or
// renamed leaves a doc pointing nowhere), no command in them runs the project's code with a bare `node` (the
// machine's Node may be older than the SQLite addon needs: `./bin/quarry`, npm scripts and node_modules/.bin/node
// use the pinned one), and the README's Layout table has a row for every folder under src/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/fixtures';
import { fencedLines, lineOf, readDocs, sectionNamed, tableCells, tables } from './markdownDocs';

const docs = readDocs(repoRoot);
const TOP = /^(src|test|bench|scripts|trainer|media|docs|webview|bin)\//;

/**
 * Repository paths in code spans: no placeholders (<name>, *, …, {a,b}, DIR/), no ../, a pytest id's `::test` and a
 * `:line` cut off. verl's own tree also has a trainer/ (`trainer/config/ppo_trainer.yaml`), so a trainer/ path counts
 * only when its first folder is one of ours.
 */
function namedPaths(text: string): { path: string; at: number }[] {
  const out: { path: string; at: number }[] = [];
  for (const m of text.matchAll(/`([^`\s]+)`/g)) {
    const path = m[1]
      .replace(/::.*$/, '')
      .replace(/[.,;:)]+$/, '')
      .replace(/:\d+(?:-\d+)?$/, '');
    if (!TOP.test(path) || /[<>*…{}$|]|\.\.|[A-Z]{3,}\//.test(path)) continue;
    if (path.startsWith('trainer/') && !existsSync(join(repoRoot, path.split('/').slice(0, 2).join('/')))) continue;
    out.push({ path, at: m.index ?? 0 });
  }
  return out;
}

test('every repository path the docs name in a code span exists', () => {
  const missing: string[] = [];
  for (const doc of docs) {
    // Code blocks are commands and examples, often of files a run writes; only prose and tables name sources.
    const prose = fencedLines(doc.text)
      .map(({ line, fenced }) => (fenced ? '' : line))
      .join('\n');
    for (const { path, at } of namedPaths(prose)) {
      if (!existsSync(join(repoRoot, path))) missing.push(`${doc.path}:${lineOf(prose, at)}: \`${path}\``);
    }
  }
  assert.equal(
    missing.length,
    0,
    `${missing.length} path(s) named in README.md or docs/*.md do not exist in the repository (fix the path, or ` +
      'write a placeholder such as <name> when it is an example):\n  ' +
      missing.join('\n  '),
  );
});

test('no command in the docs runs dist/, scripts/ or bench/ with a bare node', () => {
  const bare: string[] = [];
  for (const doc of docs) {
    for (const m of doc.text.matchAll(/(?<=^|[`\s;&|(])node (?:dist|scripts|bench)\/\S*/gm)) {
      bare.push(`${doc.path}:${lineOf(doc.text, m.index ?? 0)}: ${m[0]}`);
    }
  }
  assert.equal(
    bare.length,
    0,
    `${bare.length} command(s) in README.md or docs/*.md start the project's code with a bare \`node\`, which on ` +
      'Node 20 crashes on the SQLite addon: write `./bin/quarry …` for dist/cli.js, the npm script (`npm run bench ' +
      '-- NAME`, `npm run test:e2e -- NAME`), or `node_modules/.bin/node …` (the pinned Node):\n  ' +
      bare.join('\n  '),
  );
});

test('no table in the docs is broken: every table row belongs to a table', () => {
  const orphans: string[] = [];
  for (const doc of docs) {
    const inTable = new Set<number>();
    for (const t of tables(doc.text)) {
      inTable.add(t.line).add(t.line + 1);
      for (const r of t.rows) inTable.add(r.line);
    }
    fencedLines(doc.text).forEach(({ line, fenced }, i) => {
      if (!fenced && tableCells(line) && !inTable.has(i + 1))
        orphans.push(`${doc.path}:${i + 1}: ${line.slice(0, 80)}`);
    });
  }
  assert.equal(
    orphans.length,
    0,
    `${orphans.length} table row(s) in README.md or docs/*.md belong to no table (a paragraph or a blank line ` +
      'between rows ends a table, and the rows after it show as text):\n  ' +
      orphans.join('\n  '),
  );
});

test('the README Layout table has a row for every folder under src/', () => {
  const layout = sectionNamed(docs.find((d) => d.path === 'README.md')!, 'Layout');
  assert.ok(layout, 'README.md has no "## Layout" section');
  const firstCells = tables(layout.text).flatMap((t) => t.rows.map((r) => r.cells[0].replace(/`/g, '')));
  const folders: string[] = [];
  for (const top of readdirSync(join(repoRoot, 'src'))) {
    if (!statSync(join(repoRoot, 'src', top)).isDirectory()) continue;
    folders.push(`src/${top}/`);
    for (const sub of readdirSync(join(repoRoot, 'src', top))) {
      if (statSync(join(repoRoot, 'src', top, sub)).isDirectory()) folders.push(`src/${top}/${sub}/`);
    }
  }
  const missing = folders.filter((f) => !firstCells.includes(f) && !firstCells.includes(f.slice(0, -1)));
  assert.equal(
    missing.length,
    0,
    `README.md "Layout": ${missing.length} folder(s) under src/ have no row (first cell \`src/x/y/\`), or the ` +
      'table is broken by a paragraph inside it:\n  ' +
      missing.join('\n  '),
  );
});
