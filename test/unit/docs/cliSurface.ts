// What `quarry --help` and `quarry <command> --help` print, read back as data: every command, its subcommands
// (`quarry jobs pull`) and the flags each takes. The help text comes from the CLI's own `main`, the code that prints
// it for users, so a command or flag added there is seen here without any list to keep. Also the flags of the two
// npm scripts that take their own (`npm run editor`, `npm run train:demo`).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { main } from '../../../src/cli/main';
import { capture } from '../captureStream';
import { escapeRegExp } from './cliMentions';

interface CliFlag {
  flag: string;
  /** The subcommand whose synopsis line names it; null when the command has none or it is a common option. */
  sub: string | null;
  /** The values the synopsis lists for it (`--mode spider|bird`), if it lists a choice. */
  values: string[];
}

interface CliCommand {
  name: string;
  subcommands: string[];
  flags: CliFlag[];
  usage: string;
}

async function helpText(argv: string[]): Promise<string> {
  const out = capture();
  const err = capture();
  await main(argv, { stdout: out.stream, stderr: err.stream, cwd: process.cwd() });
  return out.text();
}

/** `--flag` tokens of a line; an underscore marks another program's flag (the official scripts' `--keep_distinct`). */
function flagsIn(line: string): string[] {
  return [...line.matchAll(/(?<![\w-])--[a-z][a-z0-9_-]*/g)].map((m) => m[0]).filter((f) => !f.includes('_'));
}

/** The choice a synopsis line gives a flag: `--mode spider|bird` → spider, bird (`cosql:FILE` → cosql). */
function choicesIn(line: string, flag: string): string[] {
  const m = new RegExp(`(?<![\\w-])${escapeRegExp(flag)}[ =]([a-z0-9+-]+(?:\\|[a-z0-9+-]+)+)`).exec(line);
  return m ? m[1].split('|') : [];
}

/**
 * Parses one command's usage text. The synopsis is everything before the first blank line: a line that starts with
 * `quarry <name> <word>` opens that subcommand, and the flags on it and its continuation lines are the
 * subcommand's. Below the synopsis only option lines count (lines that start with a flag, as `  --jobs N  …`):
 * prose mentions of other commands' flags (`quarry bench --test-suite`, `pip download --no-deps`) are not this
 * command's.
 */
export function parseUsage(name: string, usage: string): CliCommand {
  const lines = usage.split('\n');
  const blank = lines.findIndex((l) => l.trim() === '');
  const synopsis = blank < 0 ? lines : lines.slice(0, blank);
  const body = blank < 0 ? [] : lines.slice(blank + 1);
  const subcommands: string[] = [];
  const flags: CliFlag[] = [];
  const add = (flag: string, sub: string | null, values: string[] = []) => {
    const known = flags.find((f) => f.flag === flag && f.sub === sub);
    if (!known) flags.push({ flag, sub, values });
    else for (const v of values) if (!known.values.includes(v)) known.values.push(v);
  };
  let sub: string | null = null;
  const opener = new RegExp(`^(?:Usage:)?\\s*quarry ${escapeRegExp(name)}(?: ([a-z][a-z-]*)(?![\\w-]))?`);
  for (const line of synopsis) {
    const m = opener.exec(line);
    if (m) {
      sub = m[1] ?? null;
      if (sub && !subcommands.includes(sub)) subcommands.push(sub);
    }
    for (const f of flagsIn(line)) add(f, sub, choicesIn(line, f));
  }
  for (const line of body) {
    const lead = /^\s*(--[a-z][a-z0-9-]*)(?![\w-])/.exec(line);
    if (lead && !flags.some((f) => f.flag === lead[1])) add(lead[1], null);
  }
  return { name, subcommands, flags, usage };
}

/** Every command `quarry --help` lists, each with what its own `--help` says. */
export async function cliSurface(): Promise<CliCommand[]> {
  const top = await helpText(['--help']);
  const names = [...top.matchAll(/^ {2}([a-z][a-z0-9-]*) {2,}/gm)].map((m) => m[1]);
  if (names.length === 0) throw new Error(`quarry --help listed no commands:\n${top}`);
  const out: CliCommand[] = [];
  for (const name of names) out.push(parseUsage(name, await helpText([name, '--help'])));
  return out;
}

/** An npm script that takes flags of its own, with the flags its code accepts. */
interface ScriptFlags {
  script: string;
  flags: string[];
}

/**
 * The flags of `npm run editor` (what `scripts/editor/editor.mjs --help` prints, run with this test's Node) and of
 * `npm run train:demo` (the `parseArgs` options of scripts/train-demo.mjs, which has no --help: it trains at once).
 */
export function npmScriptFlags(root: string): ScriptFlags[] {
  const editor = spawnSync(process.execPath, [join(root, 'scripts', 'editor', 'editor.mjs'), '--help'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (editor.status !== 0) throw new Error(`editor.mjs --help failed: ${editor.stderr}`);
  const demo = readFileSync(join(root, 'scripts', 'train-demo.mjs'), 'utf8');
  // The options object: from `options: {` in the parseArgs call to the line that closes it (two spaces in), each
  // option a key four spaces in.
  const from = demo.indexOf('options: {', demo.indexOf('parseArgs('));
  const block = from < 0 ? '' : demo.slice(from).split(/\n {2}\},?\n/)[0];
  const demoFlags = [...block.matchAll(/^ {4}'?([a-z][a-z0-9-]*)'?: \{/gm)].map((m) => `--${m[1]}`);
  if (demoFlags.length === 0) throw new Error('scripts/train-demo.mjs: no parseArgs({ options: { … } }) options found');
  return [
    { script: 'editor', flags: [...new Set(flagsIn(editor.stdout))] },
    { script: 'train:demo', flags: demoFlags },
  ];
}
