// The options `quarry reward` and `quarry score` share: the panel, the evaluator's comparison mode and the SQL time
// limit, each refused with a usage message when wrong.
import { UsageError } from '../command';
import { positiveInt } from '../../core/db/execOptions';
import { EVAL_MODES, type EvalModeName } from '../../core/eval/modes';
import { loadPanel, DEFAULT_REWARD_TIMEOUT_MS } from '../../core/rewards';
import type { ResolvedPanel } from '../../core/rewards/types';
import { TestSuite } from '../../core/rewards/testSuite';
import { resolve } from 'node:path';

interface ScoringOptions {
  panel: ResolvedPanel;
  mode: EvalModeName;
  timeoutMs: number;
}

export function scoringOptions(
  values: { panel: string; mode?: string; 'timeout-ms'?: string },
  cwd: string,
): ScoringOptions {
  if (values.mode !== undefined && !EVAL_MODES.includes(values.mode as EvalModeName)) {
    throw new UsageError(`--mode must be one of ${EVAL_MODES.join(', ')}`);
  }
  const panel = usage(() => loadPanel(values.panel, cwd));
  return {
    // Without --mode, the panel's own comparator (each paper's evaluator; docs/rewards.md).
    mode: (values.mode as EvalModeName | undefined) ?? panel.mode,
    timeoutMs: usage(() => positiveInt('timeout-ms', values['timeout-ms'], DEFAULT_REWARD_TIMEOUT_MS)),
    panel,
  };
}

/** `--test-suite TSDIR`: the suite the execution terms check over, or null; a missing folder is a usage error. */
export function testSuiteOption(dir: string | undefined, cwd: string): TestSuite | null {
  return dir === undefined ? null : usage(() => new TestSuite(resolve(cwd, dir)));
}

/** Runs a parser whose errors are the user's input being wrong, so they are reported with the usage. */
export function usage<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
