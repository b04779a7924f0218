// `quarry bench`'s engine: run a dataset through the agent, score greedy / majority / pass@K, write the run's files.
export { runBenchmark, benchProtocolConfig, BENCH_FILES, type BenchProgress } from './runBenchmark';
export { VOTE_POOLS, defaultVotePool, episodesPerQuestion, isVotePool, voterSamples, type VotePool } from './votePool';
export { formatReport, type BenchReport } from './report';
export { ensureDir } from './ensureDir';
export { ResumeMismatchError } from './resume';
