// Quarry's own folder (`.quarry/`: labels, jobs, exports, the trajectory store) as a pure path test, so the rule the
// Databases view and the pickers follow is unit-tested without VS Code.

/** Whether `path` lies inside a `.quarry` folder (any depth, either separator). */
export function isQuarryOwnPath(path: string): boolean {
  return path.split(/[\\/]/).includes('.quarry');
}
