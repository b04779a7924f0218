// Reading a trajectory file for the replay list: the validating reader (bad lines are reported, not fatal), one
// summary and one search text per record, and labels where there are any.
import { basename } from 'node:path';
import { openTrajectoryFile } from '../../app/trajectoryFiles';
import { summarizeTrajectory, searchText, type TrajectorySummary } from '../../core/trajectories/summary';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import type { InvalidLine } from '../../protocol/replay';

export interface LoadedFile {
  file: string;
  /** Path + size + mtime: a rewritten file is a different list (and a different score cache). */
  version: string;
  records: TrajectoryRecord[];
  summaries: TrajectorySummary[];
  haystacks: string[];
  invalid: InvalidLine[];
  truncated: string | null;
  byId: Map<string, number>;
}

/** Labels by trajectory id. A record's own `meta.label` (a producer's tag) until a label store says otherwise. */
export type LabelLookup = (records: readonly TrajectoryRecord[]) => Promise<Map<string, string>>;

export const metaLabels: LabelLookup = async (records) => {
  const out = new Map<string, string>();
  for (const r of records) if (typeof r.meta?.label === 'string' && r.meta.label !== '') out.set(r.id, r.meta.label);
  return out;
};

/** Throws with a person-readable message when the file cannot be read at all (missing, a directory, unreadable). */
export async function loadTrajectoryFile(file: string, labels: LabelLookup = metaLabels): Promise<LoadedFile> {
  const read = await openTrajectoryFile(file);
  const labelOf = await labels(read.records).catch(() => new Map<string, string>());
  const summaries = read.records.map((r, i) => summarizeTrajectory(r, i, read.lines[i], labelOf.get(r.id) ?? null));
  const byId = new Map<string, number>();
  read.records.forEach((r, i) => {
    if (!byId.has(r.id)) byId.set(r.id, i);
  });
  return {
    file,
    version: read.version,
    records: read.records,
    summaries,
    haystacks: read.records.map(searchText),
    invalid: read.invalid,
    truncated: read.truncated,
    byId,
  };
}

export const fileLabel = (file: string): string => basename(file);
