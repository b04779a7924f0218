// The "Compare Checkpoints" panel's host side: reads each model's latest evaluation on the dataset from the registry
// (src/app/checkpoints/compare.ts compareModels), sends the comparison, and on request writes one disagreement's two
// greedy trajectories into a small file (.quarry/models/compare/) and opens it in Replay's compare view. Messages from
// the webview are checked (COMPARE_RULES, compareMessageProblem) before anything is done. After a window reload the
// panel comes back on the models and dataset its webview saved (revive; compareRestore checks the state).
import * as vscode from 'vscode';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services';
import { PanelController, registerPanel } from '../webviews/kit';
import { compareMessageProblem, type CompareView, type ToApp, type ToHost } from '../../protocol/compare';
import { COMPARE } from './registration';
import { describeProvenance, ModelRegistry } from '../../core/training/modelRegistry';
import type { CompareInput } from '../../core/training/checkpointCompare';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { quarryPath } from '../../core/workspace/quarryLayout';

/** The last Replay pairs opened (the file written and the two trajectory ids), for `quarry.compare.testHook`. */
const opened: Array<{ file: string; a: string; b: string }> = [];

/** The greedy (sample 0) trajectory of a question in a bench run's trajectories.jsonl, or null. */
function greedyTrajectory(file: string, questionId: string, index: number): TrajectoryRecord | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as TrajectoryRecord;
      const sameQuestion = questionId ? r.task.id === questionId : r.meta?.index === index;
      if (sameQuestion && r.id.endsWith(':0')) return r;
    } catch {
      /* a torn line */
    }
  }
  return null;
}

export class ComparePanel {
  static current: ComparePanel | undefined;

  private view: CompareView | null = null;
  private inputs: CompareInput[] = [];

  private constructor(
    private readonly panel: PanelController<ToHost, ToApp>,
    private readonly ws: string,
    private names: string[],
    private dataset: string,
  ) {
    ComparePanel.current = this;
    panel.bind({
      problem: (m) => compareMessageProblem(m, this.view),
      receive: (m) => (m.type === 'ready' ? this.send() : this.openPair(m.key, m.a, m.b)),
      onDispose: () => {
        if (ComparePanel.current === this) ComparePanel.current = undefined;
      },
    });
  }

  static show(
    context: vscode.ExtensionContext,
    services: Services,
    ws: string,
    names: string[],
    dataset: string,
  ): ComparePanel {
    const cur = ComparePanel.current;
    if (cur && !cur.panel.disposed) {
      cur.names = names;
      cur.dataset = dataset;
      cur.panel.reveal();
      void cur.send();
      return cur;
    }
    return new ComparePanel(PanelController.create(context, services, COMPARE), ws, names, dataset);
  }

  /**
   * Registers the panel with the kit: after a window reload it comes back on the same models and dataset, from the
   * webview's saved state (compareRestore); the numbers are read again from the registry, so an evaluation stored
   * meanwhile shows. `quarry.compare.testHook('opened')` lists the Replay pairs opened.
   */
  static register(context: vscode.ExtensionContext, services: Services): void {
    registerPanel(
      context,
      services,
      COMPARE,
      async (panel, saved) => {
        const ws = services.workspaceDir();
        if (!saved.ok || !ws) {
          panel.dispose();
          return saved.ok ? 'no workspace folder is open' : saved.error;
        }
        ComparePanel.current?.panel.dispose();
        const view = PanelController.adopt<ToHost, ToApp>(context, services, COMPARE, panel);
        new ComparePanel(view, ws, saved.value.names, saved.value.dataset);
        return null;
      },
      { opened: () => [...opened] },
    );
  }

  /** The comparison as last sent (tests read it). */
  get shown(): CompareView | null {
    return this.view;
  }

  private post(message: ToApp): void {
    this.panel.post(message);
  }

  private async send(): Promise<void> {
    try {
      const { compareModels } = await import('../../app/checkpoints/compare');
      const { comparison, inputs } = compareModels(this.ws, this.names, this.dataset);
      const registry = new ModelRegistry(this.ws);
      this.inputs = inputs;
      this.view = {
        dataset: this.dataset,
        comparison,
        models: this.names.map((name) => {
          const m = registry.require(name);
          const ev = m.evaluations.at(-1);
          return { name, spec: m.spec, provenance: describeProvenance(m), report: ev?.report ?? '' };
        }),
      };
      this.post({ type: 'comparison', view: this.view });
    } catch (err) {
      this.post({ type: 'error', text: (err as Error).message });
    }
  }

  /** Writes the two models' greedy trajectories of one question into a file and opens it in Replay's compare view. */
  private async openPair(key: string, a: string, b: string): Promise<void> {
    const d = this.view!.comparison.disagreements.find((x) => x.key === key)!;
    const records = [a, b].map((name) => {
      const input = this.inputs.find((i) => i.name === name)!;
      return greedyTrajectory(input.trajectories, d.id, d.index);
    });
    if (!records[0] || !records[1]) {
      this.post({ type: 'error', text: `the trajectories of ${d.id || `#${d.index}`} are not in both runs` });
      return;
    }
    const [ra, rb] = records as TrajectoryRecord[];
    // Both runs name a question's greedy episode alike only by chance; make the ids tell the models apart.
    const pair = [
      { ...ra, id: `${a}:${ra.id}` },
      { ...rb, id: `${b}:${rb.id}` },
    ];
    const dir = quarryPath(this.ws, 'modelCompare');
    mkdirSync(dir, { recursive: true });
    const safe = `${a}-vs-${b}-${d.id || d.index}`.replace(/[^\w.-]+/g, '_').slice(0, 150);
    const file = join(dir, `${safe}.jsonl`);
    writeFileSync(file, pair.map((r) => JSON.stringify(r)).join('\n') + '\n');
    if (opened.push({ file, a: pair[0].id, b: pair[1].id }) > 20) opened.shift();
    await vscode.commands.executeCommand('quarry.openReplay', { file, compare: [pair[0].id, pair[1].id] });
  }
}
