// What "Quarry: Evaluate Checkpoint…" offers to evaluate on, without the editor: the dataset, databases and protocol
// used last (asked once, then offered first for every model), the Spider-style dataset files in the workspace with
// their databases (app/train/wizardData.ts), then another file; and the folder its file dialogs open in (the last one
// used, else the workspace), not wherever the dialog was last.
import { dirname } from 'node:path';
import { findDatasetFiles } from './wizardData';

/** The last evaluation set, as workspaceState keeps it. */
export interface EvalMemory {
  dataset?: string;
  dbDir?: string;
  protocol?: string;
  /** The folder the last file dialog chose in. */
  folder?: string;
}

export function readEvalMemory(raw: unknown): EvalMemory {
  if (!raw || typeof raw !== 'object') return {};
  const r = raw as Record<string, unknown>;
  const out: EvalMemory = {};
  for (const k of ['dataset', 'dbDir', 'protocol', 'folder'] as const) if (typeof r[k] === 'string') out[k] = r[k];
  return out;
}

/** One way to answer "evaluate on what": a whole set (dataset, databases, maybe its protocol), or a dialog. */
export interface EvalSetChoice {
  label: string;
  description: string;
  detail?: string;
  set: { dataset: string; dbDir: string; protocol?: string } | null;
}

const fileOf = (dataset: string) => dataset.replace(/^[a-z]+:/, '');

/** The sets offered: the last one used first, the workspace's dataset files, then a dialog for another file. */
export function evalSetChoices(memory: EvalMemory, workspace: string): EvalSetChoice[] {
  const out: EvalSetChoice[] = [];
  if (memory.dataset && memory.dbDir && memory.protocol)
    out.push({
      label: `$(history) ${fileOf(memory.dataset).split(/[\\/]/).pop()} · ${memory.protocol}`,
      description: 'last used',
      detail: `${fileOf(memory.dataset)} · databases in ${memory.dbDir}`,
      set: { dataset: memory.dataset, dbDir: memory.dbDir, protocol: memory.protocol },
    });
  for (const f of findDatasetFiles(workspace)) {
    const dataset = `spider:${f.file}`;
    if (dataset === memory.dataset && f.dbDir === memory.dbDir && out.length > 0) continue;
    out.push({
      label: `$(database) ${f.label}`,
      description: 'in the workspace',
      detail: `${f.file} · databases in ${f.dbDir}`,
      set: { dataset, dbDir: f.dbDir },
    });
  }
  out.push({
    label: '$(folder-opened) Another dataset file…',
    description: 'a Spider-format JSON file, then its databases folder',
    set: null,
  });
  return out;
}

/** Where a file dialog opens: the folder used last, else the last dataset's folder, else the workspace. */
export function dialogFolder(memory: EvalMemory, workspace: string): string {
  return memory.folder ?? (memory.dataset ? dirname(fileOf(memory.dataset)) : workspace);
}

/** The protocols with the last one used first. */
export function protocolOrder(all: readonly string[], last: string | undefined): string[] {
  return last && all.includes(last) ? [last, ...all.filter((p) => p !== last)] : [...all];
}
