// What a launch learns from its inputs before it is written: the data folder (`quarry data rl`'s train.parquet and
// data.json: row count, protocol, turn budget, databases) and the model (a local folder's config.json gives its
// context length; a hub id is taken as the recipe says).
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

export interface DataDirInfo {
  dir: string;
  trainFile: string;
  trainExists: boolean;
  /** val.parquet or test.parquet beside train.parquet. */
  valFile: string | null;
  /** data.json was read (a folder `quarry data rl` wrote). */
  described: boolean;
  rows: number | null;
  protocol: string | null;
  maxTurns: number | null;
  /**
   * Where the prompts declare the protocol's tool (data.json's protocol.toolsDeclared): 'prompt', or
   * 'chat-template' (`quarry data rl --tools-in-template`); data.json without the field predates it: 'prompt'.
   */
  toolsDeclared: 'prompt' | 'chat-template' | null;
  /** The databases the rows name (data.json's dataset.dbDir): the service's --db-dir. */
  dbDir: string | null;
  curriculumLevels: number | null;
  problems: string[];
}

interface DataJson {
  schema?: string;
  kind?: string;
  protocol?: { name?: string; maxTurns?: number; toolsDeclared?: string };
  dataset?: { dbDir?: string };
  counts?: { written?: number };
  outputs?: { file?: string; rows?: number }[];
  curriculum?: { levels?: unknown[] } | null;
}

export function inspectDataDir(dir: string): DataDirInfo {
  const trainFile = join(dir, 'train.parquet');
  const valFile = ['val.parquet', 'test.parquet'].map((f) => join(dir, f)).find((f) => existsSync(f)) ?? null;
  const info: DataDirInfo = {
    dir,
    trainFile,
    trainExists: existsSync(trainFile),
    valFile,
    described: false,
    rows: null,
    protocol: null,
    maxTurns: null,
    toolsDeclared: null,
    dbDir: null,
    curriculumLevels: null,
    problems: [],
  };
  const jsonPath = join(dir, 'data.json');
  if (!existsSync(jsonPath)) return info;
  let doc: DataJson;
  try {
    doc = JSON.parse(readFileSync(jsonPath, 'utf8')) as DataJson;
  } catch (err) {
    info.problems.push(`${jsonPath} is not JSON: ${(err as Error).message}`);
    return info;
  }
  if (doc.schema !== 'quarry.data/1' || doc.kind !== 'rl') {
    info.problems.push(
      `${jsonPath} is not \`quarry data rl\`'s (schema ${String(doc.schema)}, kind ${String(doc.kind)})`,
    );
    return info;
  }
  info.described = true;
  const parquet = doc.outputs?.find((o) => o.file === 'train.parquet');
  info.rows =
    typeof parquet?.rows === 'number'
      ? parquet.rows
      : typeof doc.counts?.written === 'number'
        ? doc.counts.written
        : null;
  info.protocol = doc.protocol?.name ?? null;
  info.maxTurns = typeof doc.protocol?.maxTurns === 'number' ? doc.protocol.maxTurns : null;
  info.toolsDeclared = doc.protocol?.toolsDeclared === 'chat-template' ? 'chat-template' : 'prompt';
  info.dbDir = doc.dataset?.dbDir ?? null;
  info.curriculumLevels = Array.isArray(doc.curriculum?.levels) ? doc.curriculum.levels.length : null;
  return info;
}

export interface ModelInfo {
  /** What the launch passes as the model: an absolute path for a local folder, the id as given otherwise. */
  model: string;
  local: boolean;
  /** From config.json (max_position_embeddings), when the folder has one. */
  contextLength: number | null;
  problems: string[];
}

export function inspectModel(model: string, cwd: string): ModelInfo {
  const path = isAbsolute(model) ? model : resolve(cwd, model);
  const isDir = existsSync(path) && statSync(path).isDirectory();
  if (!isDir) {
    if (/^(\.{0,2}\/|~)/.test(model) || existsSync(path)) {
      return {
        model: path,
        local: true,
        contextLength: null,
        problems: [`--model ${model}: no model folder at ${path}`],
      };
    }
    return { model, local: false, contextLength: null, problems: [] };
  }
  const info: ModelInfo = { model: path, local: true, contextLength: null, problems: [] };
  const configPath = join(path, 'config.json');
  if (!existsSync(configPath)) {
    info.problems.push(`--model ${model}: ${path} has no config.json (a Hugging Face model folder has one)`);
    return info;
  }
  try {
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    const text = (config.text_config ?? {}) as Record<string, unknown>;
    const n = config.max_position_embeddings ?? text.max_position_embeddings;
    if (typeof n === 'number' && Number.isInteger(n) && n > 0) info.contextLength = n;
  } catch (err) {
    info.problems.push(`${configPath} is not JSON: ${(err as Error).message}`);
  }
  return info;
}
