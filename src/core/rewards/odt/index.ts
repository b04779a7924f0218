// Progress-SQL's Oracle-guided Diagnostic Tree (App. D): build trees, score them, tag and verbalise the differences.
export type {
  OdtNode,
  OdtNodeType,
  LocalProfile,
  OdtBuild,
  FeatureName,
  FeatureSims,
  NodeMatch,
  OdtTag,
} from './types';
export { buildOdt } from './build';
export type { BuildOptions } from './build';
export {
  FEATURE_WEIGHTS,
  FEATURES,
  ALPHA,
  numSim,
  featureSimilarities,
  localSimilarity,
  structuralSimilarity,
  scoreNodes,
  matchChildren,
} from './similarity';
export { TAG_THRESHOLDS, TAG_MEANINGS, TAG_ORDER, diagnose } from './tags';
export type { TagReason } from './tags';
export { verbalizeTags, FALLBACK_FEEDBACK } from './verbalize';
export { compareOdt } from './compare';
export type { CompareOptions, OdtComparison } from './compare';
export { renderTree, renderMatch } from './render';
