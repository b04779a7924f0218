// Trajectories: the v1 record, its validator, the JSONL writer and reader, and the database fingerprint.
export * from './types';
export { validateTrajectory } from './validate';
export { TrajectoryFormatError } from './errors';
export { TrajectoryWriter } from './writer';
export { readTrajectories, iterateTrajectories } from './reader';
export { dbSha256 } from './dbHash';
