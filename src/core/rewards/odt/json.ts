// The JSON form of one ODT comparison: what `quarry odt --json` prints and the environment service's /v1/odt returns.
import type { OdtBuild } from './types';
import type { OdtComparison } from './compare';

export function odtJson(c: OdtComparison): Record<string, unknown> {
  const tree = (b: OdtBuild) => (b.ok ? b.root : null);
  const error = (b: OdtBuild) => (b.ok ? null : b.error);
  return {
    pred: tree(c.pred),
    gold: tree(c.gold),
    predError: error(c.pred),
    goldError: error(c.gold),
    struct: c.struct,
    lexical: c.lexical,
    F: c.F,
    tags: c.tags,
    reasons: c.reasons,
    feedback: c.feedback,
  };
}
