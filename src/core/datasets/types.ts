// What the dataset loaders produce: agent Tasks plus the bookkeeping a benchmark needs to score and report them.
import type { Task } from '../agent/types';

export const DATASET_NAMES = ['spider', 'bird', 'sparc', 'cosql'] as const;
export type DatasetName = (typeof DATASET_NAMES)[number];

/** A Task from a benchmark file: id, dbId and gold are always set. */
export interface DatasetTask extends Task {
  id: string;
  dbId: string;
  gold: string;
  /**
   * 0-based position among the dataset's items (turns of a conversation count one each), i.e. the line in
   * predictions.sql.
   */
  index: number;
  /**
   * The level results are broken down by: Spider hardness (easy/medium/hard/extra) for spider/sparc/cosql, BIRD's own
   * difficulty (simple/moderate/challenging) for bird; null when unknown (the gold does not parse).
   */
  level: string | null;
  /** SParC/CoSQL: the 0-based interaction this turn belongs to (interaction-level scores group by it). */
  interaction?: number;
}

export interface Dataset {
  name: DatasetName;
  /** Absolute path of the JSON file. */
  file: string;
  /** Absolute path of the database directory (`<dbDir>/<db_id>/<db_id>.sqlite`). */
  dbDir: string;
  tasks: DatasetTask[];
  /** The levels of this dataset's breakdown, in display order. */
  levels: readonly string[];
  /** Databases that were missing and how many questions were left out for each (loaded with skipMissing). */
  skipped?: { dbId: string; questions: number }[];
}

/** A dataset that cannot be loaded; the message says which file, item and field. */
export class DatasetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatasetError';
  }
}
