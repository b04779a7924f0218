// Tests of unit/docs/manifestDocs: what package.json contributes is what docs/editor.md says: a settings-table row per
// `quarry.*` setting with its default and its allowed values or range, a commands-table row per command with its
// title, every activation event, the chat participant, and each language-model tool (anywhere in the docs). Each
// failure names the item and the row or text it needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../helpers/fixtures';
import { readDocs, sectionNamed, tables } from './markdownDocs';

interface SettingSchema {
  type?: string;
  default?: unknown;
  enum?: string[];
  minimum?: number;
  maximum?: number;
}

interface Manifest {
  activationEvents?: string[];
  contributes: {
    commands: { command: string; title: string }[];
    configuration: { properties: Record<string, SettingSchema> };
    chatParticipants?: { name: string }[];
    languageModelTools?: { name: string; toolReferenceName?: string }[];
  };
}

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Manifest;
const docs = readDocs(repoRoot);
const editor = docs.find((d) => d.path === 'docs/editor.md')!;

/** Digits of a number as docs may write it: 1000000, 1,000,000 or 1 000 000 all read 1000000. */
function plainNumbers(text: string): string {
  return text.replace(/(\d)[,\u00a0\u2009\u202f ](?=\d{3}(?!\d))/g, '$1');
}

/** How the settings table writes a default: *(empty)* for '', the JSON value in backticks otherwise. */
function formatDefault(v: unknown): string {
  if (v === '') return '*(empty)*';
  return '`' + (typeof v === 'string' ? v : JSON.stringify(v)) + '`';
}

/** What a setting's row must say besides its default: each enum value, its minimum and maximum. */
function rangeProblems(row: string, s: SettingSchema): string[] {
  const problems: string[] = [];
  for (const v of s.enum ?? []) if (!row.includes('`' + v + '`')) problems.push(`the value \`${v}\``);
  const digits = plainNumbers(row);
  for (const [what, n] of [
    ['minimum', s.minimum],
    ['maximum', s.maximum],
  ] as const) {
    if (n !== undefined && !new RegExp(`(?<![\\d.])${n}(?![\\d.])`).test(digits)) problems.push(`the ${what} ${n}`);
  }
  return problems;
}

test('every quarry.* setting has a row in docs/editor.md "Settings" with its default and range', () => {
  const section = sectionNamed(editor, 'Settings');
  assert.ok(section, 'docs/editor.md has no "## Settings" section');
  const rows = tables(section.text).flatMap((t) => t.rows.map((r) => r.cells));
  const missing: string[] = [];
  for (const [key, schema] of Object.entries(manifest.contributes.configuration.properties)) {
    const row = rows.find((cells) => cells[0] === '`' + key + '`');
    if (!row) {
      missing.push(`${key}: no row whose first cell is \`${key}\``);
      continue;
    }
    const want = formatDefault(schema.default);
    if (plainNumbers(row[1] ?? '') !== plainNumbers(want))
      missing.push(`${key}: the default cell says ${row[1]}, package.json ${want}`);
    const problems = rangeProblems(row.join(' | '), schema);
    if (problems.length) missing.push(`${key}: the row does not give ${problems.join(', ')}`);
  }
  assert.equal(
    missing.length,
    0,
    `docs/editor.md "Settings" disagrees with package.json contributes.configuration in ${missing.length} ` +
      'place(s) (one row per setting: `quarry.x` | default | what it does, with its allowed values or range):\n  ' +
      missing.join('\n  '),
  );
});

test('every contributed command has a row in docs/editor.md "Commands" with its id and title', () => {
  const section = sectionNamed(editor, 'Commands');
  assert.ok(section, 'docs/editor.md has no "## Commands" section');
  const rows = tables(section.text).flatMap((t) => t.rows.map((r) => r.cells.join(' | ')));
  const missing = manifest.contributes.commands
    .filter((c) => !rows.some((r) => r.includes('`' + c.command + '`') && r.includes(c.title)))
    .map((c) => `${c.command} "${c.title}"`);
  assert.equal(
    missing.length,
    0,
    `docs/editor.md "Commands" has no row naming both the id and the title of ${missing.length} command(s) ` +
      'package.json contributes (write the title as the palette shows it, after "Quarry: "):\n  ' +
      missing.join('\n  '),
  );
});

test('docs/editor.md "Activation" names every activation event; the docs name each chat participant and tool', () => {
  const activation = sectionNamed(editor, 'Activation')?.text ?? '';
  const missing = (manifest.activationEvents ?? [])
    .filter((e) => !activation.includes('`' + e + '`'))
    .map((e) => `docs/editor.md "Activation": \`${e}\``);
  for (const p of manifest.contributes.chatParticipants ?? []) {
    if (!editor.text.includes('`@' + p.name + '`')) missing.push(`docs/editor.md: the chat participant \`@${p.name}\``);
  }
  const all = docs.map((d) => d.text).join('\n');
  for (const t of manifest.contributes.languageModelTools ?? []) {
    if (!all.includes('`' + t.name + '`'))
      missing.push(`README.md or docs/*.md: the language-model tool \`${t.name}\``);
  }
  assert.equal(
    missing.length,
    0,
    `${missing.length} contribution(s) of package.json are not named (in backticks) in the docs:\n  ` +
      missing.join('\n  '),
  );
});
