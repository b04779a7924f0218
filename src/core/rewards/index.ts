// Reward panels of the five papers, computed and explained term by term; GRPO group statistics; integrity checks.
export * from './types';
export {
  registerTerm,
  registerPanel,
  termDefinition,
  listTerms,
  panelSpec,
  listPanels,
  resolvePanel,
} from './registry';
export { registerBuiltins, BUILTIN_PANELS, BUILTIN_PANEL_NAMES, BUILTIN_TERMS } from './builtins';
export { loadPanel } from './panelFile';
export { scorePanel, scorePanelDetailed, buildContext, DEFAULT_TURN_BUDGET } from './engine';
export { createScoringResources, DEFAULT_REWARD_TIMEOUT_MS } from './resources';
export type { ResourceOptions, ResourceStats } from './resources';
export { computeVerdict } from './verdict';
export { checkFormat, formatRuleFor, tagBlocks } from './format';
export type { FormatCheck, FormatRule } from './format';
export { difficultyFromHardness, parseDifficulty } from './difficulty';
export { clauseF1, clauseSetsF1, multisetF1, F1_CLAUSES } from './clauseF1';
export * from './group';
export { checkIntegrity, integrityFlags, integrityFlagItems, selectsStar, supersetReasons } from './integrity';
export type { IntegrityItem, IntegrityReport, IntegrityFlag } from './integrity';
export {
  mismatchReport,
  recordsMismatch,
  odtOutcome,
  formatMismatch,
  mismatchPct,
  mismatchSqlOf,
  isMismatchSql,
  MISMATCH_CATEGORIES,
  MISMATCH_SOURCE,
  MISMATCH_SQLS,
} from './mismatch';
export type {
  MismatchReport,
  MismatchScope,
  MismatchCount,
  MismatchCategory,
  MismatchSql,
  OdtOutcome,
} from './mismatch';
