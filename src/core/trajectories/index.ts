// Trajectories: the v1 record, its validator, the JSONL writer and reader, and the database fingerprint.
export * from './types';
export { validateTrajectory, isTrajectoryRecord } from './validate';
export type { TrajectoryProblem } from './validate';
export { TrajectoryFormatError } from './errors';
export { TrajectoryWriter } from './writer';
export type { WriterOptions } from './writer';
export { readTrajectories, iterateTrajectories, parseTrajectoryLine } from './reader';
export type { ReadOptions, ReadResult, TruncatedTail, LineRecord } from './reader';
export { dbSha256 } from './dbHash';
