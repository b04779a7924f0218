// `quarry export`: training data from labeled trajectories — SFT chat examples with per-message loss flags, or RL
// prompts with the corrected gold SQL (docs/editor.md, "Labeling" → "Exports").
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from '../command';
import { EXIT, UsageError } from '../command';
import { LabelStore, LabelStoreError } from '../../core/labels/store';
import { exportRlPrompts, exportSft, readLabeledRecords, type ExportSummary } from '../../core/labels/exportJsonl';
import { readTrajectories } from '../../core/trajectories/reader';
import type { Label } from '../../core/labels/types';
import { checkOutputPath, OutputRefused } from '../../core/util/outputPath';
import { SFT_SCHEMA } from '../../core/labels/sft';
import { RL_SCHEMA } from '../../core/labels/rl';
import { QUARRY_LAYOUT } from '../../core/workspace/quarryLayout';

const usage =
  `Usage: quarry export --format sft|rl --out FILE.jsonl [--labels .quarry/labels.sqlite] ` +
  `[--trajectories FILE.jsonl] ` +
  `[--keep-reasoning] [--force]

Writes training data from the label store.
  sft  one chat example per trajectory labeled correct or given a corrected SQL; "loss" is true on the model's own
       (assistant) messages only. Without --trajectories, every labeled trajectory (read from the file its label names).
       --keep-reasoning keeps the model's text before a replaced answer block.
  rl   one prompt per task of --trajectories (required): question, database, gold SQL (a corrected SQL when labeled,
       else the task's gold), difficulty. Tasks with neither gold are left out.
The label store and the trajectories are only read (a file that is not a label store is refused unchanged). --out
never replaces an input or a database, and replaces another existing file only when it is an earlier export of the
same format, or with --force; it is written to a temporary file renamed into place.
Left-out items are listed on stderr. Exit codes: 0 written, 2 bad input (usage, missing or unreadable files).`;

export const exportCommand: Command = {
  name: 'export',
  summary: 'Write SFT examples or RL prompts (JSONL) from labeled trajectories',
  usage,
  async run(argv, io) {
    const { values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        labels: { type: 'string' },
        trajectories: { type: 'string' },
        format: { type: 'string' },
        out: { type: 'string' },
        'keep-reasoning': { type: 'boolean' },
        force: { type: 'boolean' },
      },
    });
    if (values.format !== 'sft' && values.format !== 'rl') throw new UsageError('--format sft|rl is required');
    if (!values.out) throw new UsageError('--out FILE.jsonl is required');
    if (values.format === 'rl' && !values.trajectories)
      throw new UsageError('--format rl needs --trajectories FILE.jsonl (the tasks to turn into prompts)');
    if (values['keep-reasoning'] && values.format !== 'sft')
      throw new UsageError('--keep-reasoning only applies to --format sft');
    const labelsPath = resolve(io.cwd, values.labels ?? QUARRY_LAYOUT.labels);
    const trajectories = values.trajectories ? resolve(io.cwd, values.trajectories) : null;
    const out = resolve(io.cwd, values.out);
    if (trajectories && !existsSync(trajectories)) throw new UsageError(`no such trajectory file: ${trajectories}`);
    if (!existsSync(labelsPath) && values.format === 'sft')
      throw new UsageError(
        `no label store at ${labelsPath} (label trajectories in the editor first, or pass --labels)`,
      );

    try {
      const schema = values.format === 'sft' ? SFT_SCHEMA : RL_SCHEMA;
      checkOutputPath(out, {
        inputs: [labelsPath, trajectories],
        kind: values.format === 'sft' ? 'SFT examples' : 'RL prompts',
        force: values.force,
        sameKind: (line) => {
          try {
            return (JSON.parse(line) as { schema?: unknown }).schema === schema;
          } catch {
            return false;
          }
        },
      });
    } catch (err) {
      if (err instanceof OutputRefused) {
        io.stderr.write(`quarry export: ${err.message}\n`);
        return EXIT.badInput;
      }
      throw err;
    }

    let labels: Label[] = [];
    if (existsSync(labelsPath)) {
      let store: LabelStore;
      try {
        store = LabelStore.openReadOnly(labelsPath);
      } catch (err) {
        if (err instanceof LabelStoreError) {
          io.stderr.write(`quarry export: ${err.message}\n`);
          return EXIT.badInput;
        }
        throw err;
      }
      try {
        labels = store.all();
      } finally {
        store.close();
      }
    }
    const byId = new Map(labels.map((l) => [l.trajectoryId, l]));

    let summary: ExportSummary;
    let missing: { id: string; reason: string }[] = [];
    let bad = 0;
    if (trajectories) {
      const read = await readTrajectories(trajectories, { onInvalid: 'collect' });
      bad = read.invalid.length;
      for (const e of read.invalid.slice(0, 5)) io.stderr.write(`quarry export: skipped a bad line: ${e.message}\n`);
      summary =
        values.format === 'sft'
          ? await exportSft(read.records, byId, out, { keepReasoning: values['keep-reasoning'] === true })
          : await exportRlPrompts(read.records, byId, out);
    } else {
      const found = await readLabeledRecords(labels);
      missing = found.missing;
      summary = await exportSft(found.records, byId, out, { keepReasoning: values['keep-reasoning'] === true });
    }
    for (const s of [...summary.skipped, ...missing]) io.stderr.write(`left out ${s.id}: ${s.reason}\n`);
    const what = values.format === 'sft' ? 'SFT examples' : 'RL prompts';
    const left = summary.skipped.length + missing.length;
    io.stdout.write(
      `wrote ${summary.written} ${what} to ${out}${left ? ` (${left} left out)` : ''}` +
        `${bad ? ` (${bad} bad line(s) in the trajectory file skipped)` : ''}\n`,
    );
    return EXIT.ok;
  },
};
