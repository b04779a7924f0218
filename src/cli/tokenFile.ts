// Reading a --token-file, as `quarry serve-env` and `quarry mcp --http` both take one: the file's text, trimmed, must
// not be empty. Any problem is the caller's input (a UsageError).
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from './command';

export function readTokenFile(cwd: string, file: string): string {
  let token: string;
  try {
    token = readFileSync(resolve(cwd, file), 'utf8').trim();
  } catch (err) {
    throw new UsageError(`cannot read --token-file: ${(err as Error).message}`);
  }
  if (token === '') throw new UsageError(`--token-file ${file} is empty`);
  return token;
}
