// Progress-SQL's Oracle-guided Diagnostic Tree (App. D): build trees, score them, tag and verbalise the differences.
export type { OdtNode, LocalProfile, OdtBuild, FeatureName, NodeMatch, OdtTag } from './types';
export { buildOdt } from './build';
export { FEATURE_WEIGHTS, FEATURES, ALPHA, numSim, featureSimilarities, localSimilarity } from './similarity';
export { TAG_THRESHOLDS, TAG_MEANINGS, TAG_ORDER, diagnose } from './tags';
export { verbalizeTags, FALLBACK_FEEDBACK } from './verbalize';
export { compareOdt } from './compare';
export type { OdtComparison } from './compare';
export { renderTree, renderMatch } from './render';
