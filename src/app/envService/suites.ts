// The operator's test suite as a request meets it: the suite databases a panel's execution terms check an episode or
// a reward on, or a 400 naming why not (the panel requires a suite and the server has none, or none for that
// database). Messages name the db_id, never the server's folders.
import { inputSuite } from '../../core/rewards/engine';
import { SuiteError, type SuiteDatabases } from '../../core/rewards/testSuite';
import type { ResolvedPanel, ScoringInput } from '../../core/rewards/types';
import { ServiceError } from './errors';

export function suiteOrRefuse(panel: ResolvedPanel, input: ScoringInput): SuiteDatabases | undefined {
  try {
    return inputSuite(panel, input);
  } catch (err) {
    if (err instanceof SuiteError) throw new ServiceError('bad-request', err.message);
    throw err;
  }
}
