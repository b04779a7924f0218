// The run view's sentences and groupings without the DOM: the GRPO group summary, the list of zero-variance groups,
// what the ODT could not compare, and the integrity flags grouped by kind with the first few of each shown.
import type { GroupDiagnostics, RunDiagnostics } from '../../src/core/rewards/report';
import type { IntegrityFlag } from '../../src/core/rewards/integrity';
import type { MismatchScope } from '../../src/protocol/diagnostics';
import { num, pct } from './format';

/** Flags of one kind shown at once; the rest wait behind a disclosure. */
const FLAGS_SHOWN = 10;
/** Zero-variance groups named in the sentence; the rest are counted. */
const GROUP_IDS_SHOWN = 30;

interface FlagGroup {
  kind: IntegrityFlag['kind'];
  shown: IntegrityFlag[];
  /** Drawn only when the reader opens them (a large run can raise a zero-variance flag for thousands of groups). */
  rest: IntegrityFlag[];
}

/** The flags by kind, in the order each kind first appears, the first `shown` of each up front. */
export function flagGroups(flags: readonly IntegrityFlag[], shown = FLAGS_SHOWN): FlagGroup[] {
  const kinds = [...new Set(flags.map((f) => f.kind))];
  return kinds.map((kind) => {
    const all = flags.filter((f) => f.kind === kind);
    return { kind, shown: all.slice(0, shown), rest: all.slice(shown) };
  });
}

/** The GRPO paragraph: how many groups, how many give no gradient, pass@G and the all/none solved counts. */
export function groupsSentence(g: GroupDiagnostics): string {
  return (
    `${g.count} questions with several samples; ` +
    `zero reward variance in ${g.zeroVariance} (${pct(g.zeroVarianceShare)}): no gradient from them. ` +
    `Mean pass@G ${num(g.meanPass)}; solved by all samples ${g.solvedByAll}, by none ${g.solvedByNone}.`
  );
}

/** The zero-variance group ids, the first GROUP_IDS_SHOWN of them and a count of the rest. */
export function zeroVarianceList(ids: readonly string[]): string {
  const more = ids.length > GROUP_IDS_SHOWN ? ` … (+${ids.length - GROUP_IDS_SHOWN})` : '';
  return ids.slice(0, GROUP_IDS_SHOWN).join(', ') + more;
}

/** Sentence listing what the ODT could not compare (these have no tags and are left out of the rates). */
export function notCompared(s: MismatchScope): string {
  const ex = s.excluded;
  return [
    ex.noSql && `${ex.noSql} without SQL`,
    ex.predUnparsed && `${ex.predUnparsed} prediction(s) that do not parse`,
    ex.goldUnparsed && `${ex.goldUnparsed} gold(s) that do not parse`,
  ]
    .filter(Boolean)
    .join(', ');
}

/** The heading of one scope of the mismatch report. */
export function scopeHeading(s: MismatchScope): string {
  const who = s.name === 'greedy' ? 'Greedy (temperature 0) trajectories' : 'All trajectories';
  return `${who}: ${s.compared} of ${s.trajectories} compared`;
}

/** The run summary's reward line. */
export function rewardLine(run: RunDiagnostics): string {
  return `reward mean ${num(run.total.mean)} · min ${num(run.total.min)} · max ${num(run.total.max)}`;
}
