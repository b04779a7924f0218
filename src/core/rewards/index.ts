// Reward panels of the five papers, computed and explained term by term; GRPO group statistics; integrity checks.
export * from './types';
export { registerTerm, listPanels, resolvePanel } from './registry';
export { registerBuiltins } from './builtins';
export { loadPanel } from './panelFile';
export { scorePanel, scorePanelDetailed } from './engine';
export { createScoringResources, DEFAULT_REWARD_TIMEOUT_MS } from './resources';
export { computeVerdict } from './verdict';
export { parseDifficulty } from './difficulty';
export { clauseF1 } from './clauseF1';
export * from './group';
export { checkIntegrity, integrityFlags, integrityFlagItems, selectsStar } from './integrity';
export type { IntegrityItem } from './integrity';
