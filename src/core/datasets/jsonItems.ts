// Reading a benchmark JSON file and checking the fields each item must have, with messages that point at the item.
import { readFileSync } from 'node:fs';
import { DatasetError } from './types';

export type JsonObject = Record<string, unknown>;

/** The file's top-level list of objects. */
export function readJsonList(file: string, what: string): JsonObject[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new DatasetError(
      `cannot read ${what} file ${file}: ` +
        `${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message}`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new DatasetError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(data))
    throw new DatasetError(`${file}: expected a JSON list of ${what} items, found ${describe(data)}`);
  data.forEach((item, i) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new DatasetError(`${file}: item ${i} is ${describe(item)}, expected an object`);
    }
  });
  return data as JsonObject[];
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return /^[aeiou]/.test(typeof v) ? `an ${typeof v}` : `a ${typeof v}`;
}

/**
 * The string field `names[0]` (or the first alternative present) of `item`; `where` names the item in the message.
 * Empty strings are accepted only when `allowEmpty`.
 */
export function stringField(
  item: JsonObject,
  names: string[],
  file: string,
  where: string,
  opts: { allowEmpty?: boolean } = {},
): string {
  const name = names.find((n) => item[n] !== undefined);
  if (name === undefined) {
    throw new DatasetError(
      `${file}: ${where} has no "${names[0]}" field${
        names.length > 1
          ? ` (nor ${names
              .slice(1)
              .map((n) => `"${n}"`)
              .join(', ')})`
          : ''
      }`,
    );
  }
  const v = item[name];
  if (typeof v !== 'string')
    throw new DatasetError(`${file}: ${where} field "${name}" is ${describe(v)}, expected a string`);
  if (!opts.allowEmpty && v.trim() === '') throw new DatasetError(`${file}: ${where} field "${name}" is empty`);
  return v;
}

/** An optional string field: undefined when absent or null. */
export function optionalString(item: JsonObject, name: string, file: string, where: string): string | undefined {
  const v = item[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string')
    throw new DatasetError(`${file}: ${where} field "${name}" is ${describe(v)}, expected a string`);
  return v;
}

/** The list field `name` of `item`. */
export function listField(item: JsonObject, name: string, file: string, where: string): unknown[] {
  const v = item[name];
  if (v === undefined) throw new DatasetError(`${file}: ${where} has no "${name}" field`);
  if (!Array.isArray(v)) throw new DatasetError(`${file}: ${where} field "${name}" is ${describe(v)}, expected a list`);
  return v;
}
