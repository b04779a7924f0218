// One reducer for the Ask conversation, run by the host on its copy (so a reopened panel gets the whole state back)
// and by the app on its own (so it only redraws what changed). Pure; mutates the state it is given, for speed with
// token-by-token streaming.
import type { AskState, ExchangeEvent, ExchangeView, TurnView } from './ask';

export function emptyState(model = ''): AskState {
  return { db: null, exchanges: [], model };
}

function newTurn(index: number, finalCall: boolean): TurnView {
  return {
    index,
    finalCall,
    text: '',
    parsed: false,
    kind: null,
    sql: null,
    thought: null,
    mdp: [],
    problems: [],
    exec: null,
    observation: null,
  };
}

function turnOf(x: ExchangeView, index: number): TurnView {
  let t = x.turns.find((u) => u.index === index);
  if (!t) {
    t = newTurn(index, false);
    x.turns.push(t);
    x.turns.sort((a, b) => a.index - b.index);
  }
  return t;
}

/**
 * Applies one event to exchange `at`. A 'start' at index = exchanges.length opens a new exchange; any other event for
 * an exchange that does not exist is ignored (returns false), so a stale message cannot corrupt the state.
 */
export function applyEvent(state: AskState, at: number, e: ExchangeEvent): boolean {
  if (e.kind === 'start') {
    if (at !== state.exchanges.length) return false;
    state.exchanges.push({
      id: e.id,
      question: e.question,
      protocol: e.protocol,
      budget: e.budget,
      ...(e.model ? { model: e.model } : {}),
      turns: [],
      running: true,
      end: null,
      finalSql: null,
      error: null,
      result: null,
      resultRunning: false,
      savedTo: null,
      totalMs: null,
    });
    return true;
  }
  const x = state.exchanges[at];
  if (!x) return false;
  switch (e.kind) {
    case 'turn': {
      const t = turnOf(x, e.index);
      t.finalCall = e.finalCall;
      break;
    }
    case 'text':
      turnOf(x, e.index).text += e.delta;
      break;
    case 'action': {
      const t = turnOf(x, e.index);
      t.text = e.text;
      t.parsed = true;
      t.kind = e.action.kind;
      t.sql = e.action.sql;
      t.thought = e.action.thought;
      t.mdp = [...e.action.mdp];
      t.problems = [...e.action.problems];
      break;
    }
    case 'exec':
      turnOf(x, e.index).exec = e.result;
      break;
    case 'observation':
      turnOf(x, e.index).observation = e.text;
      break;
    case 'end':
      x.running = false;
      x.end = e.end;
      x.finalSql = e.finalSql;
      x.error = e.error;
      x.totalMs = e.totalMs;
      break;
    case 'resultRunning':
      x.resultRunning = true;
      break;
    case 'result':
      x.resultRunning = false;
      x.result = e.result;
      break;
    case 'saved':
      x.savedTo = e.path;
      break;
  }
  return true;
}

/**
 * Turns that finished (the model's whole reply was read), as the trajectory counts them: a turn stopped while the
 * model was still answering is not one. The final call after the budget does not count against it.
 */
export function turnsUsed(x: ExchangeView): number {
  return x.turns.filter((t) => t.parsed && !t.finalCall).length;
}

export function isRunning(state: AskState): boolean {
  return state.exchanges.some((x) => x.running);
}
