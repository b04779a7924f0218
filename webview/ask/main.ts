// The Ask panel: a conversation with the agent about one database. The host runs the episodes and streams them as
// events; this app mirrors the conversation (state.ts) and redraws only the exchange an event touched, once per frame.
// A card's Plan button toggles its final SQL's query plan (a tree with warnings, planned by the host in the sandbox).
import { connectHost } from '../shared/host';
import { button, h, progressRing, registerComponents, setDisabled, table, tag, textArea } from '../shared/components';
import { highlightSql } from '../shared/sqlHighlight';
import { pagedGrid, type PagedGrid } from '../shared/pagedGrid';
import { planView } from '../shared/planTree';
import type { PlanOutcome } from '../../src/protocol/plan';
import type {
  AskAppState,
  AskState,
  ConversationSummary,
  ExchangeView,
  ToApp,
  ToHost,
  TurnView,
  WireResult,
} from '../../src/protocol/ask';
import { applyEvent, emptyState, isRunning } from '../../src/protocol/askState';
import { splitQuestion } from '../../src/protocol/askAboutSql';
import { statusText, stoppedNote } from './cardText';

registerComponents();
const host = connectHost<ToHost, ToApp, AskAppState>();
const saved = host.state();
let state: AskState = saved?.state ?? emptyState();
let draft = saved?.draft ?? '';
const open = new Set(saved?.open ?? []);
/**
 * One paged grid per exchange's shown result, so redrawing an exchange keeps its page and sort; the host pages the
 * whole result in SQLite (a new result, another conversation or a fresh webview makes a new grid, which asks again).
 */
const grids = new Map<number, { result: WireResult; grid: PagedGrid }>();
/** Plans on show, by exchange id: the SQL planned and the outcome (null while the host plans it). */
const plans = new Map<string, { sql: string; outcome: PlanOutcome | null }>();

const app = document.getElementById('app')!;
const header = h('div', { class: 'q-row' });
const notice = h('div', { role: 'status', 'aria-live': 'polite' });
const conversation = h('div', { id: 'conversation' });
const question = textArea({ placeholder: 'Ask a question…', id: 'question', rows: 3 });
question.value = draft;
question.style.width = '100%';
const askButton = button('Ask', ask, { id: 'ask', title: 'Ask (Ctrl+Enter)' });
const stopButton = button('Stop', () => host.post({ type: 'stop' }), {
  id: 'stop',
  appearance: 'secondary',
  title: 'Stop the running question (Escape)',
  disabled: true,
});
const composer = h(
  'div',
  { class: 'q-card' },
  question,
  h(
    'div',
    { class: 'q-row' },
    askButton,
    stopButton,
    h(
      'span',
      { class: 'q-muted', id: 'shortcuts' },
      'Ctrl+Enter ask · Escape stop · Tab moves between actions · ' +
        'in a result: PageUp/PageDown pages, Enter on a header sorts',
    ),
  ),
);
app.append(header, notice, conversation, composer);

let cards: HTMLElement[] = [];
const dirty = new Set<number>();
let frame = 0;

function ask(): void {
  const text = question.value.trim();
  if (text === '' || isRunning(state)) return;
  host.post({ type: 'ask', question: text });
  question.value = '';
  draft = '';
  persist();
}

question.addEventListener('keydown', (e: KeyboardEvent) => {
  if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    ask();
  }
});
question.addEventListener('input', () => {
  draft = question.value;
  persist();
});
window.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && isRunning(state)) {
    e.preventDefault();
    host.post({ type: 'stop' });
  }
});

host.onMessage((m) => {
  switch (m.type) {
    case 'state':
      state = m.state;
      renderAll();
      break;
    case 'event':
      if (m.event.kind === 'start') dirty.add(-1); // a new card: rebuild the list
      if (applyEvent(state, m.exchange, m.event)) {
        dirty.add(m.exchange);
        schedule();
      }
      break;
    case 'notice':
      showNotice(m.level, m.text);
      break;
    case 'grid': {
      const g = grids.get(m.exchange);
      if (g && state.exchanges[m.exchange]?.result === g.result) g.grid.receive(m.message);
      break;
    }
    case 'plan': {
      const x = state.exchanges[m.exchange];
      const shown = x && plans.get(x.id);
      if (shown && shown.sql === m.sql) {
        shown.outcome = m.outcome;
        redraw(m.exchange);
      }
      break;
    }
    case 'focusInput':
      if (m.text !== undefined) {
        question.value = m.text;
        draft = m.text;
      }
      question.focus();
      break;
  }
});
host.post({ type: 'ready' });
renderAll();

function showNotice(level: 'info' | 'error', text: string): void {
  notice.replaceChildren(
    h(
      'div',
      { class: level === 'error' ? 'q-error q-card' : 'q-muted q-card', role: level === 'error' ? 'alert' : undefined },
      text,
    ),
  );
}

function schedule(): void {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    if (dirty.has(-1) || cards.length !== state.exchanges.length) renderAll();
    else for (const i of dirty) redraw(i);
    dirty.clear();
    renderChrome();
    persist();
  });
}

let saveTimer: ReturnType<typeof setTimeout> | undefined;
function persist(): void {
  // Streaming sends many events a second; one saved state per half second is plenty.
  if (saveTimer) return;
  saveTimer = setTimeout(() => {
    saveTimer = undefined;
    host.saveState({ state, draft, open: [...open] });
  }, 500);
}

function renderAll(): void {
  cards = state.exchanges.map((x, i) => exchangeCard(x, i));
  conversation.replaceChildren(...cards);
  renderChrome();
  persist();
}

/** Redraws one exchange in place, keeping keyboard focus on the same control when it still exists. */
function redraw(i: number): void {
  const x = state.exchanges[i];
  if (!x || !cards[i]) return;
  const focusedId = (document.activeElement as HTMLElement | null)?.id;
  const card = exchangeCard(x, i);
  cards[i].replaceWith(card);
  cards[i] = card;
  if (focusedId && card.querySelector(`#${CSS.escape(focusedId)}`))
    (document.getElementById(focusedId) as HTMLElement).focus();
  if (x.running) card.scrollIntoView({ block: 'end' });
}

function renderChrome(): void {
  const running = isRunning(state);
  setDisabled(stopButton, !running);
  setDisabled(askButton, running || !state.db);
  question.setAttribute(
    'placeholder',
    !state.db
      ? 'Choose a database first'
      : state.exchanges.some((x) => x.finalSql)
        ? 'Ask a follow-up — it remembers the questions and answers above (Ctrl+Enter)'
        : `Ask a question about ${state.db.label} (Ctrl+Enter)`,
  );
  const kept = state.conversations ?? [];
  header.replaceChildren(
    h('strong', {}, state.db ? state.db.label : 'No database chosen'),
    h('span', { class: 'q-muted', title: state.db?.path }, state.model ? `model: ${state.model}` : ''),
    button('Change database…', () => host.post({ type: 'changeDb' }), {
      appearance: 'secondary',
      id: 'change-db',
      disabled: running,
    }),
    button('New conversation', () => host.post({ type: 'newConversation' }), {
      appearance: 'secondary',
      id: 'new-conversation',
      disabled: running || state.exchanges.length === 0,
    }),
    ...(kept.length ? [conversationList(kept, running)] : []),
  );
}

/** The kept conversations (another database, New conversation), each a button that brings it back. */
function conversationList(kept: ConversationSummary[], running: boolean): HTMLElement {
  const items = kept.map((c, i) =>
    h(
      'li',
      {},
      button(
        `${c.db.label} · ${c.questions} question${c.questions === 1 ? '' : 's'} · “${clip(c.first, 60)}”`,
        () => host.post({ type: 'openConversation', index: i }),
        { appearance: 'secondary', id: `conversation-${i}`, disabled: running },
      ),
    ),
  );
  const list = h('ul', { class: 'q-conversations', 'aria-label': 'Earlier conversations' }, ...items);
  return details('conversations', `Conversations (${kept.length} more)`, list);
}

function clip(text: string, n: number): string {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function details(key: string, summary: string, body: Node): HTMLElement {
  const el = h('details', { open: open.has(key) }, h('summary', {}, summary), body);
  el.addEventListener('toggle', () => {
    if ((el as HTMLDetailsElement).open) open.add(key);
    else open.delete(key);
    persist();
  });
  return el;
}

function exchangeCard(x: ExchangeView, i: number): HTMLElement {
  const card = h('section', { class: 'q-card q-exchange', id: `x${i}`, 'aria-label': `Question ${i + 1}` });
  // Asked about selected SQL: the question is the title, the SQL shows below it as code.
  const asked = splitQuestion(x.question);
  const text = h('span', { class: 'q-question' }, asked.title);
  // A long question wraps beside its number instead of dropping below it.
  text.style.flex = '1 1 0';
  text.style.minWidth = '0';
  card.append(h('div', { class: 'q-row' }, h('strong', {}, `Q${i + 1}.`), text));
  if (asked.sql !== null)
    card.append(h('div', { class: 'q-asked-sql', id: `x${i}-asked-sql` }, highlightSql(asked.sql)));
  const status = h(
    'div',
    { class: 'q-row q-muted', id: `x${i}-status` },
    h('span', {}, statusText(x)),
    x.running ? progressRing() : null,
    h('span', {}, x.running ? 'working…' : endText(x)),
  );
  card.append(status);
  for (const t of x.turns) card.append(turnView(x, i, t));
  if (x.running) return card;

  if (x.error) card.append(h('div', { class: 'q-error', role: 'alert' }, `✗ ${x.error}`));
  if (x.end === 'cancelled') card.append(h('div', { class: 'q-warn' }, stoppedNote(x)));
  if (x.end === 'budget' && !x.finalSql)
    card.append(h('div', { class: 'q-warn' }, `No answer within ${x.budget} turns.`));
  if (x.finalSql) {
    card.append(h('h3', {}, 'Final SQL'), highlightSql(x.finalSql));
  }
  const actions = h('div', { class: 'q-row', role: 'toolbar', 'aria-label': 'Actions on the final SQL' });
  const act = (
    label: string,
    type: ToHost['type'],
    title: string,
    needsSql = true,
    appearance: 'primary' | 'secondary' = 'secondary',
  ) => {
    if (needsSql && !x.finalSql) return;
    actions.append(
      button(label, () => host.post({ type, exchange: i } as ToHost), { appearance, title, id: `x${i}-${type}` }),
    );
  };
  act('Run', 'run', 'Run the final SQL and show the result', true, 'primary');
  act('Open in Editor', 'openSql', 'Open the SQL in a new .sql editor');
  act('Insert at Cursor', 'insertSql', 'Insert the SQL at the cursor of the last active editor');
  act('Copy', 'copySql', 'Copy the SQL');
  act('Save Trajectory', 'saveTrajectory', 'Append the trajectory to the workspace store', false);
  act('Save As…', 'saveTrajectoryAs', 'Save the trajectory to a JSONL file of your choice', false);
  act('Label', 'label', 'Open this trajectory in the labeling queue', false);
  const plan = x.finalSql ? plans.get(x.id) : undefined;
  if (x.finalSql) {
    const sql = x.finalSql;
    const toggle = button('Plan', () => togglePlan(x, i, sql), {
      appearance: 'secondary',
      title: 'Show or hide the query plan of the final SQL: how SQLite will run it',
      id: `x${i}-plan`,
    });
    toggle.setAttribute('aria-pressed', String(!!plan));
    toggle.setAttribute('aria-controls', `x${i}-plan-view`);
    actions.append(toggle);
  }
  card.append(actions);
  if (plan) {
    card.append(
      plan.outcome
        ? planView(plan.outcome, `x${i}-plan-view`)
        : h('div', { class: 'q-row q-muted', id: `x${i}-plan-view` }, progressRing(), 'planning…'),
    );
  }
  if (x.savedTo) card.append(h('div', { class: 'q-muted', id: `x${i}-saved` }, `Trajectory saved to ${x.savedTo}`));
  if (x.resultRunning) card.append(h('div', { class: 'q-row q-muted' }, progressRing(), 'running the final SQL…'));
  else if (x.result) card.append(finalResult(x.result, i));
  return card;
}

/** Shows exchange `i`'s plan (asking the host for it) or hides it. */
function togglePlan(x: ExchangeView, i: number, sql: string): void {
  const shown = plans.get(x.id);
  if (shown && shown.sql === sql) plans.delete(x.id);
  else {
    plans.set(x.id, { sql, outcome: null });
    host.post({ type: 'plan', exchange: i });
  }
  redraw(i);
}

function endText(x: ExchangeView): string {
  const secs = x.totalMs === null ? '' : ` in ${(x.totalMs / 1000).toFixed(1)} s`;
  switch (x.end) {
    case 'answer':
      return `answered${secs}`;
    case 'budget':
      return x.finalSql ? `turn budget used up; best answer${secs}` : `no answer${secs}`;
    case 'invalid':
      return `ended on an invalid turn${secs}`;
    case 'cancelled':
      return `stopped${secs}`;
    case 'error':
      return `failed${secs}`;
    default:
      return '';
  }
}

function turnView(x: ExchangeView, i: number, t: TurnView): HTMLElement {
  const el = h('div', { class: 'q-turn', id: `x${i}-t${t.index}` });
  const head = h(
    'div',
    { class: 'q-row' },
    h('strong', {}, `Turn ${t.index + 1}`),
    t.finalCall ? tag('final answer after the budget') : h('span', { class: 'q-muted' }, `of ${x.budget}`),
  );
  for (const m of t.mdp) head.append(tag(m));
  el.append(head);
  if (!t.parsed) {
    // Still generating: show the text as it streams, open, since there is nothing else yet.
    if (x.running) el.append(h('pre', { class: 'q-muted q-stream' }, t.text || '…'));
    else {
      el.append(
        h('div', { class: 'q-warn' }, t.text ? 'The turn was cut off here:' : 'Stopped before the model answered.'),
      );
      if (t.text) el.append(h('pre', {}, t.text));
    }
    return el;
  }
  const reasoning = t.thought ?? (t.kind === 'invalid' ? t.text : null);
  if (reasoning?.trim()) el.append(details(`${x.id}:${t.index}:r`, 'Reasoning', h('pre', {}, reasoning.trim())));
  if (t.kind === 'invalid') {
    el.append(h('div', { class: 'q-error' }, `✗ Invalid turn: ${t.problems.join('; ') || 'no action found'}`));
  } else {
    for (const p of t.problems) el.append(h('div', { class: 'q-warn' }, `note: ${p}`));
    if (t.kind === 'memory')
      el.append(h('div', { class: 'q-muted' }, 'Checks the SQL against the conversation so far (memory)'));
    if (t.kind === 'answer' && t.sql !== null && t.sql === x.finalSql)
      el.append(h('div', { class: 'q-muted' }, 'Answers with the final SQL below.'));
    else if (t.sql !== null)
      el.append(h('div', { class: 'q-muted' }, t.kind === 'answer' ? 'Answer:' : 'Runs:'), highlightSql(t.sql));
  }
  if (t.exec) el.append(execView(t.exec));
  if (t.observation) el.append(details(`${x.id}:${t.index}:o`, 'What the model was told', h('pre', {}, t.observation)));
  return el;
}

function execView(r: WireResult): HTMLElement {
  if (!r.ok)
    return h(
      'div',
      { class: 'q-error', role: 'note' },
      `✗ ${r.errorClass ?? 'error'}: ${r.error ?? 'the query failed'}`,
    );
  const caption =
    `${r.rowCount.toLocaleString()} row${r.rowCount === 1 ? '' : 's'} · ${r.ms.toFixed(1)} ms` +
    `${r.truncated ? ` · showing ${r.rows.length}` : ''}`;
  return h('div', { class: 'q-obs' }, h('div', { class: 'q-muted' }, caption), table(r.columns, r.rows));
}

function finalResult(r: WireResult, i: number): HTMLElement {
  if (!r.ok)
    return h(
      'div',
      { class: 'q-error', role: 'alert', id: `x${i}-result` },
      `✗ The final SQL failed (${r.errorClass ?? 'error'}): ${r.error ?? ''}`,
    );
  let entry = grids.get(i);
  if (entry?.result !== r) {
    const grid = pagedGrid((message) => host.post({ type: 'grid', exchange: i, message }), { id: `x${i}-result` });
    entry = { result: r, grid };
    grids.set(i, entry);
    grid.reload();
  }
  return h('div', {}, h('h3', {}, 'Result'), entry.grid.element);
}
