// The `quarry.*` settings as what runEpisode takes: protocol, turn budget, per-statement caps, sampling. Pure (no
// `vscode`), shared by the Ask panel and the chat participant.
import type { ProtocolConfig, ProtocolName } from '../../core/agent/types';
import type { SamplingOptions } from '../../core/models/types';
import type { QuarrySettings } from '../settings';

/**
 * Rows of the final SQL's result the conversation keeps (what a follow-up's memory quotes, what the panel saves); the
 * result grid pages, sorts, filters and exports the whole result through the sandbox itself (GridSession).
 */
export const FINAL_RESULT_MAX_ROWS = 200;

interface AgentSettings {
  protocol: ProtocolName;
  config: Partial<ProtocolConfig> & { maxTurns: number };
  sampling: SamplingOptions;
  modelTimeoutMs: number;
  queryTimeoutMs: number;
}

export function agentSettings(s: QuarrySettings): AgentSettings {
  return {
    protocol: s.agent.protocol,
    // timeoutMs/maxRows cap every statement the model runs; observationChars caps what it is shown
    // (skyrl/sqltrail/mtir).
    config: {
      maxTurns: s.agent.maxTurns,
      timeoutMs: s.query.timeoutMs,
      maxRows: s.observation.maxRows,
      observationChars: s.observation.maxChars,
    },
    sampling: { temperature: s.agent.temperature },
    modelTimeoutMs: s.agent.modelTimeoutMs,
    queryTimeoutMs: s.query.timeoutMs,
  };
}
