// report.json of a benchmark run and its text form: EX for greedy decoding, majority vote and pass@K, overall and by
// level, with the agent's behaviour (turns, invalid actions, tokens) from the trajectories.
import type { TrajectoryRecord } from '../trajectories/types';
import type { QuestionScore } from './scoreQuestion';
import { describeVote, type VoteInfo } from './votePool';

export interface LevelEx {
  count: number;
  greedy: number;
  /** null when there is no vote (K = 1). */
  majority: number | null;
  passAtK: number | null;
}

interface AgentStats {
  /** Trajectories counted (every finished sample). */
  trajectories: number;
  /** Mean assistant turns per trajectory (a final-call generation counts as a turn). */
  avgTurns: number;
  /** Turns whose action was invalid, over all turns. */
  invalidActionRate: number;
  /** Mean completion tokens per turn (what the model generated). */
  tokensPerTurn: number;
  /** Mean prompt tokens per turn (the context it read). */
  promptTokensPerTurn: number;
  /** How the episodes ended: answer, budget, invalid, error. */
  ends: Record<string, number>;
}

export interface BenchReport extends AgentStats {
  schema: 'quarry.bench/1';
  /** Questions scored (all of their K samples finished). */
  items: number;
  /** Questions the run was asked for (after --limit); items < planned when it was interrupted. */
  planned: number;
  complete: boolean;
  /**
   * Why the run ended early: Ctrl-C / the caller's signal, or too many failed episodes in a row; null when it ran
   * through.
   */
  stopped: 'cancelled' | 'errors' | null;
  /** Episodes reused from an earlier run's trajectories.jsonl (--resume), not run again. */
  resumedEpisodes: number;
  /** K, the candidates of each vote (--samples). */
  samples: number;
  /** Which samples voted (and count for pass@K): the papers' K sampled candidates, or greedy + K−1 samples. */
  vote: VoteInfo;
  dataset: { name: string; file: string; dbDir: string };
  /** Databases missing from --db-dir and the questions left out for each (empty when none). */
  skipped: { dbId: string; questions: number }[];
  mode: string;
  model: string;
  /** `feedback` is set for progress: 'none', Progress-SQL's single-turn evaluation protocol. */
  protocol: { name: string; maxTurns: number | null; feedback?: string };
  sampling: { greedy: { temperature: 0 }; others: { temperature: number } | null };
  ex: { greedy: number; majority: number | null; passAtK: number | null };
  /**
   * The greedy predictions' exact matches: Spider's exact-set match (null where it does not apply: BIRD) and
   * MTSQL-R1's string EM (§4), over the scored questions.
   */
  em?: { exactSet: number | null; string: number };
  /**
   * Keyed by the dataset's levels (Spider hardness, or BIRD difficulty) and `all`; unknown levels count only in all.
   */
  byHardness: Record<string, LevelEx>;
  /**
   * SParC/CoSQL only: interaction-level EX (the official "interaction match" idea with execution): an interaction
   * counts as right when every one of its turns is, under each scoring; only interactions with every turn scored count.
   */
  interactions?: LevelEx;
  /** Episodes that could not start or failed, in words (first 20). */
  errors: string[];
  /**
   * What makes the scores less meaningful, as `quarry eval` warns: gold queries that fail, time out or return nothing.
   */
  warnings: string[];
  timings: { totalMs: number; startedAt: string };
  questions: QuestionScore[];
}

export function exactMatchRates(scores: readonly QuestionScore[]): { exactSet: number | null; string: number } {
  const withEm = scores.filter((s) => s.em !== undefined);
  const sets = withEm.filter((s) => s.em!.exactSet !== null);
  return {
    exactSet: sets.length === 0 ? null : rate(sets.filter((s) => s.em!.exactSet).length, sets.length),
    string: rate(withEm.filter((s) => s.em!.string).length, withEm.length),
  };
}

function rate(n: number, d: number): number {
  return d === 0 ? 0 : n / d;
}

/** `voting`: the run voted (K > 1), so majority and pass@K are rates rather than null. */
export function levelTable(
  scores: QuestionScore[],
  levels: readonly string[],
  voting: boolean,
): Record<string, LevelEx> {
  const out: Record<string, LevelEx> = {};
  for (const level of [...levels, 'all']) {
    const mine = level === 'all' ? scores : scores.filter((s) => s.level === level);
    const count = mine.length;
    out[level] = {
      count,
      greedy: rate(mine.filter((s) => s.greedy).length, count),
      majority: voting ? rate(mine.filter((s) => s.majority).length, count) : null,
      passAtK: voting ? rate(mine.filter((s) => s.passAtK).length, count) : null,
    };
  }
  return out;
}

/** Behaviour totals added one trajectory at a time, so a long run does not keep every record in memory. */
export class AgentStatsAccumulator {
  private trajectories = 0;
  private turns = 0;
  private invalid = 0;
  private completion = 0;
  private prompt = 0;
  private readonly ends: Record<string, number> = {};

  add(r: TrajectoryRecord): void {
    this.trajectories++;
    this.turns += r.turns.length;
    for (const t of r.turns) {
      if (t.action.kind === 'invalid') this.invalid++;
      this.completion += t.usage.completionTokens;
      this.prompt += t.usage.promptTokens;
    }
    this.ends[r.end] = (this.ends[r.end] ?? 0) + 1;
  }

  result(): AgentStats {
    return {
      trajectories: this.trajectories,
      avgTurns: rate(this.turns, this.trajectories),
      invalidActionRate: rate(this.invalid, this.turns),
      tokensPerTurn: rate(this.completion, this.turns),
      promptTokensPerTurn: rate(this.prompt, this.turns),
      ends: { ...this.ends },
    };
  }
}

/** Interaction-level scores, from the turns' scores; `turnsOf` says how many turns each interaction has in the run. */
export function interactionEx(scores: QuestionScore[], turnsOf: Map<number, number>, voting: boolean): LevelEx {
  const byInteraction = new Map<number, QuestionScore[]>();
  for (const s of scores) {
    if (s.interaction === undefined) continue;
    const list = byInteraction.get(s.interaction) ?? [];
    list.push(s);
    byInteraction.set(s.interaction, list);
  }
  const whole = [...byInteraction].filter(([i, turns]) => turns.length === turnsOf.get(i)).map(([, turns]) => turns);
  const all = (pick: (s: QuestionScore) => boolean | null) =>
    rate(whole.filter((turns) => turns.every((t) => pick(t) === true)).length, whole.length);
  return {
    count: whole.length,
    greedy: all((s) => s.greedy),
    majority: voting ? all((s) => s.majority) : null,
    passAtK: voting ? all((s) => s.passAtK) : null,
  };
}

function listIds(ids: string[]): string {
  return ids.slice(0, 10).join(', ') + (ids.length > 10 ? `, … (${ids.length} in all)` : '');
}

/** The warnings `quarry eval` would give about the gold side of these questions. */
export function goldWarnings(scores: QuestionScore[]): string[] {
  const out: string[] = [];
  const empty = scores.filter((s) => s.goldEmpty).map((s) => s.id);
  if (empty.length)
    out.push(
      `${empty.length} questions have an EMPTY gold result ` +
        `([] == [] rewards any prediction that returns no rows): ${listIds(empty)}`,
    );
  for (const [reason, what] of [
    ['gold-error', 'gold queries FAILED (scored wrong)'],
    ['gold-timeout', 'gold queries TIMED OUT (scored wrong)'],
  ] as const) {
    const ids = scores.filter((s) => s.samples.some((x) => x.reason === reason)).map((s) => s.id);
    if (ids.length) out.push(`${ids.length} ${what}: ${listIds(ids)}`);
  }
  const noLevel = scores.filter((s) => s.level === null).map((s) => s.id);
  if (noLevel.length)
    out.push(
      `${noLevel.length} questions have no level (gold not parsed by the Spider parser, or no BIRD difficulty); ` +
        `they count only under "all": ${listIds(noLevel)}`,
    );
  return out;
}

const pct = (x: number | null): string => (x === null ? '-' : (100 * x).toFixed(1));

/** The summary `quarry bench` prints. */
export function formatReport(r: BenchReport): string {
  const k = r.samples;
  const levels = Object.keys(r.byHardness);
  const head = ['', ...levels].map((c, i) => (i === 0 ? c.padEnd(14) : c.padStart(12))).join('');
  const cells = (name: string, values: string[]) => [name.padEnd(14), ...values.map((v) => v.padStart(12))].join('');
  // A level without questions shows '-', not a misleading 0.0.
  const row = (name: string, pick: (l: LevelEx) => number | null) =>
    cells(
      name,
      levels.map((l) => (r.byHardness[l].count === 0 ? '-' : pct(pick(r.byHardness[l])))),
    );
  const lines = [
    `${r.dataset.name} ${r.dataset.file}: ${r.items} of ${r.planned} questions` +
      (r.stopped === 'errors'
        ? ' (STOPPED after repeated failures: partial results)'
        : r.complete
          ? ''
          : ' (INTERRUPTED: partial results)') +
      ', ' +
      `${r.vote.episodes} episode${r.vote.episodes === 1 ? '' : 's'} each, protocol ${r.protocol.name}` +
      (r.protocol.feedback === 'none' ? " (single-turn, no ODT feedback: Progress-SQL's evaluation protocol)" : '') +
      ', ' +
      `model ${r.model}, ${r.mode} evaluation`,
    `vote: ${describeVote(r.vote)}`,
    '',
    `EX greedy     ${pct(r.ex.greedy)}%`,
    ...(r.em
      ? [
          `EM greedy     exact-set ${r.em.exactSet === null ? 'n/a' : `${pct(r.em.exactSet)}%`}   ` +
            `string ${pct(r.em.string)}% (MTSQL-R1)`,
        ]
      : []),
    `EX majority@${k} ${k > 1 ? `${pct(r.ex.majority)}%` : '- (needs --samples > 1)'}`,
    `EX pass@${k}     ${k > 1 ? `${pct(r.ex.passAtK)}%` : '- (needs --samples > 1)'}`,
    '',
    head,
    cells(
      'count',
      levels.map((l) => String(r.byHardness[l].count)),
    ),
    row('greedy', (l) => l.greedy),
    ...(k > 1 ? [row(`majority@${k}`, (l) => l.majority), row(`pass@${k}`, (l) => l.passAtK)] : []),
    ...(r.interactions
      ? [
          '',
          `interactions (all turns right): ${r.interactions.count}   greedy ${pct(r.interactions.greedy)}%` +
            (k > 1
              ? `   majority@${k} ${pct(r.interactions.majority)}%   pass@${k} ${pct(r.interactions.passAtK)}%`
              : ''),
        ]
      : []),
    '',
    `avg turns ${r.avgTurns.toFixed(2)}   invalid actions ${pct(r.invalidActionRate)}%   ` +
      `tokens/turn ${r.tokensPerTurn.toFixed(1)} generated, ${r.promptTokensPerTurn.toFixed(0)} prompt`,
    `episodes: ${
      Object.entries(r.ends)
        .map(([e, n]) => `${e} ${n}`)
        .join(', ') || 'none'
    }`,
  ];
  return lines.join('\n');
}
