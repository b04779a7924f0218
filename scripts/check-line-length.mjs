// `npm test` step: fails, naming file:line, when a checked source line is longer than 120 characters (issue 11).
// Checked: the repository's TypeScript, JavaScript, Python, CSS and HTML files (git ls-files), except those listed in
// scripts/line-length-allow.txt (paths or folder prefixes, one a line, `#` comments); JSON is data and is not checked.
import { readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAX_LINE = 120;
const CHECKED = /\.(ts|mts|cts|js|mjs|cjs|py|css|html)$/;

/** Lines of `text` longer than `max` characters (code points, as editors and formatters count them), 1-based. */
function longLines(text, max = MAX_LINE) {
  const out = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.length > max && [...line].length > max) out.push({ line: i + 1, length: [...line].length });
  });
  return out;
}

/** The allowlist's entries: a path, or a folder ending in `/` whose files are all allowed. */
function readAllowlist(path) {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
}

function allowed(file, allow) {
  return allow.some((a) => (a.endsWith('/') ? file.startsWith(a) : file === a));
}

/** Checks the repository at `root` (default: this one); `node scripts/check-line-length.mjs [ROOT]`. */
function main(root = resolve(dirname(fileURLToPath(import.meta.url)), '..')) {
  const allow = readAllowlist(join(root, 'scripts', 'line-length-allow.txt'));
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => CHECKED.test(f) && !allowed(f, allow) && existsSync(join(root, f)));
  const problems = [];
  for (const f of files) {
    for (const { line, length } of longLines(readFileSync(join(root, f), 'utf8'))) {
      problems.push(`${f}:${line}: ${length} characters (at most ${MAX_LINE})`);
    }
  }
  if (problems.length) {
    console.error(`${problems.length} line(s) longer than ${MAX_LINE} characters:\n${problems.join('\n')}`);
    process.exitCode = 1;
  } else console.log(`line length: ${files.length} files, every line at most ${MAX_LINE} characters`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main(process.argv[2]);
