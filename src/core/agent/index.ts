// The agent: environment, turn budget and loop. Protocols live in ./protocols; models in ../models.
export { SqlAgentEnv, SchemaCache, defaultSchemaCache, EnvError } from './env';
export type { SqlAgentEnvOptions, StepMeta } from './env';
export { turnBudget } from './budget';
export { runEpisode, startEnv, EpisodeSetupError } from './loop';
export type { RunEpisodeOptions, EpisodeEvent, StartEnvOptions } from './loop';
export type * from './types';
export type * from './protocol';
