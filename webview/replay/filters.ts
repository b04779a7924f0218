// The filter bar: verdict and facet dropdowns with their counts, turn and reward ranges, text search, Clear, and the
// reward panel picker in the header. Every change goes to the host as a numbered `filter` message.
import { button, dropdown, h, textField } from '../shared/components';
import type { TrajectoryFilter } from '../../src/protocol/replay';
import { persist, type ReplayContext } from './context';
import { fmt } from './format';

export interface FilterBar {
  /** Rebuilds the controls whose facets or values changed. */
  render(): void;
  /** Sends the current filter to the host. */
  send(): void;
  /** Empties every filter, without sending (another file is opening: its list message sends it). */
  reset(): void;
}

/**
 * A bound of a range filter. Empty reads "any" (a placeholder that cannot be taken for a value); the file's own range
 * is the tooltip.
 */
function numberField(
  id: string,
  hint: string,
  value: number | null | undefined,
  onValue: (v: number | null) => void,
): HTMLElement {
  const placeholder = 'any';
  const el = textField({ id, placeholder, value: value === null || value === undefined ? '' : String(value) }, (v) => {
    const t = v.trim();
    const n = t === '' ? null : Number(t);
    el.classList.toggle('q-error', n !== null && !Number.isFinite(n));
    if (n === null || Number.isFinite(n)) onValue(n);
  });
  el.classList.add('r-num');
  el.title = hint;
  return el;
}

type FacetValues = { value: string; count: number }[];

function facetDropdown(
  id: string,
  anyLabel: string,
  values: FacetValues,
  current: string | undefined,
  onChange: (v: string) => void,
): HTMLElement {
  const opts = [
    { value: '', label: anyLabel },
    ...values.map((v) => ({ value: v.value, label: `${v.value} (${v.count})` })),
  ];
  if (current && !values.some((v) => v.value === current)) opts.push({ value: current, label: `${current} (0)` });
  return dropdown(opts, current ?? '', onChange, id);
}

export function createFilterBar(ctx: ReplayContext): FilterBar {
  const { host, state, ui } = ctx;
  let textTimer: ReturnType<typeof setTimeout> | undefined;
  /** Filter controls by id, each rebuilt only when what it shows changed, and never while it has the focus (scores
   *  arriving in batches change the counts while someone is typing a search or choosing from a dropdown). */
  const slots = new Map<string, { wrap: HTMLElement; sig: string }>();
  /** Bumped by Clear, so text and number fields are rebuilt empty. */
  let clearCount = 0;

  function send(): void {
    host.post({ type: 'filter', seq: ++state.seq, filter: state.app.filter as Record<string, unknown> });
    persist(ctx);
  }

  function setFilter(patch: Partial<TrajectoryFilter>, debounce = false): void {
    const filter = state.app.filter as Record<string, unknown>;
    Object.assign(filter, patch);
    for (const [k, v] of Object.entries(filter)) if (v === '' || v === null || v === undefined) delete filter[k];
    if (textTimer) clearTimeout(textTimer);
    if (debounce) textTimer = setTimeout(send, 150);
    else send();
  }

  function slot(id: string, label: string, sig: string, make: () => HTMLElement): HTMLElement {
    let s = slots.get(id);
    if (!s) {
      s = { wrap: h('label', { class: 'r-f' }, label), sig: '\0' };
      slots.set(id, s);
    }
    if (s.sig !== sig) {
      const old = s.wrap.querySelector<HTMLElement>(`#${id}`);
      const active = document.activeElement;
      const focused = !!old && !!active && (old === active || old.contains(active));
      if (!focused) {
        const el = make();
        if (old) old.replaceWith(el);
        else s.wrap.append(el);
        s.sig = sig;
      }
    }
    return s.wrap;
  }

  function reset(): void {
    if (textTimer) clearTimeout(textTimer);
    state.app.filter = {};
    clearCount++;
  }

  function clear(): void {
    reset();
    render();
    send();
  }

  function render(): void {
    const f = state.facets;
    if (!f) return;
    const v = f.verdicts;
    const app = state.app;
    const sigOf = (...parts: unknown[]) => JSON.stringify([clearCount, ...parts]);
    type FacetKey = 'protocol' | 'model' | 'db' | 'label';
    const facet = (id: string, label: string, anyLabel: string, values: FacetValues, key: FacetKey) =>
      slot(id, label, sigOf(values), () =>
        facetDropdown(id, anyLabel, values, app.filter[key], (x) => setFilter({ [key]: x })),
      );
    const range = (
      id: string,
      label: string,
      sigPart: unknown,
      hint: string,
      key: 'turnsMin' | 'turnsMax' | 'rewardMin' | 'rewardMax',
    ) =>
      slot(id, label, sigOf(sigPart), () =>
        numberField(id, hint, app.filter[key], (n) => setFilter({ [key]: n }, true)),
      );
    const rewardHint = f.reward ? `rewards in this file: ${fmt(f.reward.min)}–${fmt(f.reward.max)}` : 'not scored yet';
    const parts = [
      slot('f-verdict', 'Verdict', sigOf(v, app.filter.verdict), () =>
        dropdown(
          [
            { value: 'any', label: 'Any verdict' },
            { value: 'correct', label: `Correct (${v.correct})` },
            { value: 'incorrect', label: `Incorrect (${v.incorrect})` },
            { value: 'unscored', label: `Not scored (${v.unscored})` },
          ],
          app.filter.verdict ?? 'any',
          (x) => setFilter({ verdict: x as TrajectoryFilter['verdict'] }),
          'f-verdict',
        ),
      ),
      facet('f-protocol', 'Protocol', 'Any protocol', f.protocols, 'protocol'),
      facet('f-model', 'Model', 'Any model', f.models, 'model'),
      facet('f-db', 'Database', 'Any database', f.dbs, 'db'),
      facet('f-label', 'Label', 'Any label', f.labels, 'label'),
      range('f-turns-min', 'Turns ≥', f.turns.min, `turns in this file: ${f.turns.min}–${f.turns.max}`, 'turnsMin'),
      range('f-turns-max', 'Turns ≤', f.turns.max, `turns in this file: ${f.turns.min}–${f.turns.max}`, 'turnsMax'),
      range('f-reward-min', 'Reward ≥', f.reward?.min, rewardHint, 'rewardMin'),
      range('f-reward-max', 'Reward ≤', f.reward?.max, rewardHint, 'rewardMax'),
      slot('f-search', 'Search', sigOf(), () => {
        const placeholder = 'question, SQL or id  ( / )';
        const search = textField({ id: 'f-search', placeholder, value: app.filter.text ?? '' }, (t) =>
          setFilter({ text: t }, true),
        );
        search.classList.add('r-search');
        return search;
      }),
      slot('f-clear', '', sigOf(), () =>
        button('Clear', clear, { appearance: 'secondary', id: 'f-clear', title: 'Clear every filter' }),
      ),
    ];
    if (ui.filters.childElementCount !== parts.length) ui.filters.replaceChildren(...parts);
    ui.panelSlot.replaceChildren(
      slot('f-panel', 'Reward panel', sigOf(state.panels, state.panelName), () =>
        dropdown(
          state.panels.map((p) => ({ value: p, label: p === 'auto' ? 'auto (by protocol)' : p })),
          state.panelName,
          (p) => host.post({ type: 'setPanel', panel: p }),
          'f-panel',
        ),
      ),
    );
  }

  return { render, send, reset };
}
