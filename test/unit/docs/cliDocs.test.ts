// Tests of unit/docs/cliDocs: every command, subcommand and flag that `quarry … --help` prints is documented: the
// README's command table lists each command and subcommand, and each flag appears in a section of README.md or
// docs/*.md that names its command (or subcommand); a table row that names a command in its first cell (an index
// such as the README's command table) is a unit of its own, so the flags of one row do not document another
// command. The failure lists each missing item and where it belongs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { repoRoot } from '../../helpers/fixtures';
import { cliSurface, npmScriptFlags, parseUsage } from './cliSurface';
import { readDocs, sectionNamed, sections, tables, tableCells, type Section } from './markdownDocs';
import { mentionsCommand, mentionsFlag } from './cliMentions';

const docs = readDocs(repoRoot);
const readme = docs.find((d) => d.path === 'README.md')!;

/** A section, less its command-index rows (first cell names `quarry …`), and each such row as a unit of its own. */
function units(s: Section): Section[] {
  const rows: Section[] = [];
  const rest = s.text
    .split('\n')
    .filter((line) => {
      const cells = tableCells(line);
      if (!cells || !/quarry [a-z]/.test(cells[0])) return true;
      rows.push({ ...s, heading: `${s.heading}" row "${cells[0]}`, text: line });
      return false;
    })
    .join('\n');
  // The heading belongs to its section: "## `quarry testsuite build`: the statement limit" names the command.
  return [{ ...s, text: `${s.heading}\n${rest}` }, ...rows];
}

test('the help parser finds subcommands and their flags, and leaves other programs’ flags out', () => {
  const c = parseUsage(
    'jobs',
    'Usage: quarry jobs submit --target NAME [--json]\n' +
      '       quarry jobs pull ID [--checkpoint NAME]\n' +
      '                        [--all]\n\n' +
      'Prose naming quarry bench --test-suite and pip download --no-deps.\n' +
      '  --grace-s S   seconds\n',
  );
  assert.deepEqual(c.subcommands, ['submit', 'pull']);
  assert.deepEqual(
    c.flags.map((f) => `${f.sub ?? '-'} ${f.flag}`),
    ['submit --target', 'submit --json', 'pull --checkpoint', 'pull --all', '- --grace-s'],
  );
  assert.deepEqual(
    parseUsage('eval', 'Usage: quarry eval [--mode spider|bird|bird-ex] --dataset spider|sparc:FILE [--out F]\n').flags,
    [
      { flag: '--mode', sub: null, values: ['spider', 'bird', 'bird-ex'] },
      { flag: '--dataset', sub: null, values: ['spider', 'sparc'] },
      { flag: '--out', sub: null, values: [] },
    ],
  );
});

test('every quarry command and subcommand has a row in the README command table', async () => {
  const section = sectionNamed(readme, 'The command line');
  assert.ok(section, 'README.md has no "## The command line" section');
  const firstCells = tables(section.text)
    .flatMap((t) => t.rows)
    .map((r) => r.cells[0])
    .join('\n');
  const missing: string[] = [];
  for (const c of await cliSurface()) {
    if (!mentionsCommand(firstCells, c.name)) missing.push(`\`quarry ${c.name}\``);
    for (const sub of c.subcommands) {
      if (!mentionsCommand(firstCells, c.name, sub)) missing.push(`\`quarry ${c.name} ${sub}\``);
    }
  }
  assert.equal(
    missing.length,
    0,
    `README.md, "The command line": the command table's first column lacks ${missing.length} command(s) that ` +
      `\`quarry --help\` lists (write \`quarry jobs pull\`, or \`quarry jobs submit\\|pull\` in a row):\n  ` +
      missing.join('\n  '),
  );
});

test('every flag of every quarry command, and each value it offers, is documented where its command is', async () => {
  const all = docs.flatMap(sections).flatMap(units);
  const missing: string[] = [];
  for (const c of await cliSurface()) {
    for (const { flag, sub, values } of c.flags) {
      const named = all.filter((s) => mentionsCommand(s.text, c.name, sub ?? undefined));
      const where = named.length
        ? `sections naming it: ${[...new Set(named.map((s) => `${s.file} "${s.heading}"`))].slice(0, 4).join(', ')}`
        : 'no section names it yet';
      const command = `quarry ${c.name}${sub ? ' ' + sub : ''}`;
      // Each value a flag offers (`--mode bird`) is named where the command is, like a flag.
      for (const v of values) {
        if (!named.some((s) => mentionsFlag(s.text, v))) missing.push(`${command} ${flag} ${v} (a value; ${where})`);
      }
      if (!named.some((s) => mentionsFlag(s.text, flag))) missing.push(`${command} ${flag} (${where})`);
    }
  }
  assert.equal(
    missing.length,
    0,
    `${missing.length} flag(s) or flag value(s) that \`quarry <command> --help\` prints appear in no section of ` +
      'README.md or docs/*.md that names their command (`quarry <command>`, or `quarry <command> <subcommand>` ' +
      "for a subcommand's flag): document each beside its command:\n  " +
      missing.join('\n  '),
  );
});

test('every flag of `npm run editor` and `npm run train:demo` is documented where the script is named', () => {
  const all = docs.flatMap(sections);
  const missing: string[] = [];
  for (const { script, flags } of npmScriptFlags(repoRoot)) {
    assert.ok(flags.length > 0, `no flags found for npm run ${script}`);
    const named = all.filter((s) => s.text.includes(`npm run ${script}`));
    for (const flag of flags) {
      if (!named.some((s) => mentionsFlag(s.text, flag))) missing.push(`npm run ${script} -- ${flag}`);
    }
  }
  assert.equal(
    missing.length,
    0,
    `${missing.length} flag(s) of npm scripts appear in no section of README.md or docs/*.md that names the ` +
      'script (`npm run editor`, `npm run train:demo`):\n  ' +
      missing.join('\n  '),
  );
});
