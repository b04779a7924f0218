// `quarry bench`'s engine: run a dataset through the agent, score greedy / majority / pass@K, write the run's files.
export {
  runBenchmark,
  benchProtocolConfig,
  benchEvalMode,
  BENCH_FILES,
  type BenchOptions,
  type BenchProgress,
} from './runBenchmark';
export {
  VOTE_POOLS,
  defaultVotePool,
  describeVote,
  episodesPerQuestion,
  isVotePool,
  voteInfo,
  voterSamples,
  type VoteInfo,
  type VotePool,
} from './votePool';
export {
  formatReport,
  levelTable,
  agentStats,
  AgentStatsAccumulator,
  type BenchReport,
  type LevelEx,
  type AgentStats,
} from './report';
export { scoreQuestion, goldLine, type QuestionScore, type SampleScore } from './scoreQuestion';
export { ensureDir } from './ensureDir';
export { predictionLine, oneLine, NO_ANSWER_PLACEHOLDER } from './predictionLine';
export { loadResumable, ResumeMismatchError, type RunIdentity } from './resume';
