// The loop's episode events as the Ask panel's exchange events: the same order, JSON-safe results (bigint and blobs
// made printable), only what the panel shows. No `vscode` here, so the chat participant shares it.
import type { EpisodeEvent } from '../../core/agent/loop';
import type { ExecResult } from '../../core/db/types';
import type { TrajectoryRecord } from '../../core/trajectories/types';
import { wireRows } from '../../core/db/resultExport';
import type { ExchangeEvent, WireResult } from '../../protocol/ask';
import { labelOfSpec } from './modelSwitch';

export function wireResult(r: ExecResult): WireResult {
  return {
    ok: r.ok,
    errorClass: r.errorClass,
    error: r.error,
    columns: [...r.columns],
    rows: wireRows(r.rows),
    rowCount: r.rowCount,
    truncated: r.truncated,
    ms: r.ms,
  };
}

/** `model`: the label of the model that answers, named on the question's card. */
export function exchangeEvent(e: EpisodeEvent, question: string, model?: string): ExchangeEvent {
  switch (e.type) {
    case 'start':
      return { kind: 'start', id: e.id, question, protocol: e.protocol, budget: e.budget, ...(model ? { model } : {}) };
    case 'turn':
      return { kind: 'turn', index: e.index, finalCall: e.finalCall };
    case 'text':
      return { kind: 'text', index: e.index, delta: e.delta };
    case 'action': {
      const a = e.action;
      return {
        kind: 'action',
        index: e.index,
        text: e.assistant,
        action: { kind: a.kind, sql: a.sql, thought: a.thought, mdp: [...a.mdp], problems: [...a.problems] },
      };
    }
    case 'exec':
      return { kind: 'exec', index: e.index, result: wireResult(e.result) };
    case 'observation':
      return { kind: 'observation', index: e.index, text: e.observations.map((o) => o.content).join('\n\n') };
    case 'done': {
      const r = e.record;
      return { kind: 'end', end: r.end, finalSql: r.finalSql, error: r.error, totalMs: r.timings.totalMs };
    }
  }
}

/**
 * The events a finished episode's record stands for, in the loop's order, so a conversation can be rebuilt from the
 * trajectory store (the Ask panel after a window reload). A record keeps each query result's shape but not its rows:
 * `exec` results come without rows. Streamed text is not kept either; the action's text stands for it, as it does
 * once a turn is parsed.
 */
export function recordEvents(r: TrajectoryRecord): ExchangeEvent[] {
  const maxTurns = r.protocol.config.maxTurns;
  const budget = r.protocol.budget ?? (typeof maxTurns === 'number' ? maxTurns : r.turns.length);
  // The Ask panel keeps the model's label in meta; a record from elsewhere is named by its spec.
  const model = typeof r.meta.modelLabel === 'string' ? r.meta.modelLabel : labelOfSpec(r.model.spec);
  const events: ExchangeEvent[] = [
    { kind: 'start', id: r.id, question: r.task.question, protocol: r.protocol.name, budget, model },
  ];
  for (const t of r.turns) {
    const a = t.action;
    // The one generation after the budget is the turn past it (env.ts: the final phase follows the budget-th turn).
    events.push({ kind: 'turn', index: t.index, finalCall: t.index >= budget });
    const action = { kind: a.kind, sql: a.sql, thought: a.thought, mdp: [...a.mdp], problems: [...a.problems] };
    events.push({ kind: 'action', index: t.index, text: t.assistant, action });
    const x = t.exec;
    if (x && a.sql !== null) {
      const result = {
        ok: x.ok,
        errorClass: x.errorClass,
        error: x.error,
        columns: [...x.columns],
        rows: [],
        rowCount: x.rowCount,
        truncated: x.truncated,
        ms: x.ms,
      };
      events.push({ kind: 'exec', index: t.index, result });
    }
    if (t.observations.length) {
      events.push({ kind: 'observation', index: t.index, text: t.observations.map((o) => o.content).join('\n\n') });
    }
  }
  events.push({ kind: 'end', end: r.end, finalSql: r.finalSql, error: r.error, totalMs: r.timings.totalMs });
  return events;
}

/**
 * Coalesces streamed text: many one-token 'text' events become one per flush, and any other event flushes the text
 * before it, so the order the loop reported is kept.
 */
export class TextBatcher {
  private pending: { exchange: number; index: number; delta: string } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly send: (exchange: number, e: ExchangeEvent) => void,
    private readonly delayMs = 40,
  ) {}

  push(exchange: number, e: ExchangeEvent): void {
    if (e.kind === 'text') {
      if (this.pending && (this.pending.exchange !== exchange || this.pending.index !== e.index)) this.flush();
      if (this.pending) this.pending.delta += e.delta;
      else this.pending = { exchange, index: e.index, delta: e.delta };
      this.timer ??= setTimeout(() => this.flush(), this.delayMs);
      return;
    }
    this.flush();
    this.send(exchange, e);
  }

  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const p = this.pending;
    this.pending = null;
    if (p) this.send(p.exchange, { kind: 'text', index: p.index, delta: p.delta });
  }
}
