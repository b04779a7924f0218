// Builds the SpiderScorer the CLI uses: hardness and exact-set match from the Spider SQL parser once it is wired in.
import { type SpiderScorer, noSpiderScorer } from './spiderHooks';

export interface SpiderScorerOptions {
  dbDir: string;
  tablesPath?: string;
  needExactMatch: boolean;
}

export function spiderScorer(opts: SpiderScorerOptions): SpiderScorer {
  if (opts.needExactMatch) throw new Error('exact-set match is not available in this build (the Spider parser is not wired in yet)');
  return noSpiderScorer;
}
