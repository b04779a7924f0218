// How docs name a command and a flag: `quarry jobs` (not `quarry jobs-x`), a subcommand as `quarry jobs pull` or in
// an alternation `quarry jobs submit|pull` (tables escape the bar: `submit\|pull`), a flag as `--follow`.

/** `s` as a literal inside a RegExp. */
export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
}

/** Whether `text` names `quarry <name>`, or with `sub` the subcommand `quarry <name> <sub>` (alone or in a|b|c). */
export function mentionsCommand(text: string, name: string, sub?: string): boolean {
  const plain = text.replace(/\\\|/g, '|');
  if (sub === undefined) return new RegExp(`quarry ${escapeRegExp(name)}(?![\\w-])`).test(plain);
  return new RegExp(`quarry ${escapeRegExp(name)} (?:[a-z-]+\\|)*${escapeRegExp(sub)}(?![\\w-])`).test(plain);
}

/**
 * Whether `text` holds the flag `--name` (or a flag's value, `bird`) as a whole token: `--max-turns` does not count for
 * `--max`, nor `bird-ex` for `bird`.
 */
export function mentionsFlag(text: string, flag: string): boolean {
  return new RegExp(`(?<![\\w-])${escapeRegExp(flag)}(?![\\w-])`).test(text);
}
