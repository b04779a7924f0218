// The side pane: which view it shows (detail, compare, group), switching between them, the current turn (marked in
// every view, stepped with n/p) and where the pane is scrolled.
import { h } from '../shared/components';
import { persist, type ReplayContext } from './context';
import { compareView } from './compare';
import { detailView, rewardSection, turnCounterText } from './detail';
import { groupView } from './group';
import type { TrajectoryList } from './list';
import { say } from './status';
import { cursorRow, keyOfId } from './state';

export interface SidePane {
  /** Shows the view `app.view` names. */
  render(): void;
  renderDetail(): void;
  renderCompare(): void;
  renderGroup(): void;
  /** Puts the reward card of the open detail in place (its explanation arrived). */
  updateReward(): void;
  /** Replaces the pane with a line of text (nothing matches, the file is empty). */
  showText(text: string): void;
  /** Highlights the current turn in whichever view, and scrolls it into view. */
  markTurn(scroll?: boolean): void;
  stepTurn(delta: number): void;
  /** Compare the two marked trajectories (c). */
  openCompare(): void;
  /** The GRPO group of the cursor's trajectory (g). */
  openGroup(): void;
  /** Back to the detail view (d). */
  backToDetail(): void;
}

export function createSidePane(ctx: ReplayContext, list: Pick<TrajectoryList, 'cancelPendingSelect'>): SidePane {
  const { host, state, ui } = ctx;
  const { side, main } = ui;
  let shownView = '';

  /** A different view (or another trajectory) starts at the top of the pane, not where the last one was scrolled. */
  function resetScroll(what: string): void {
    if (what !== shownView) side.scrollTop = 0;
    shownView = what;
  }

  function showText(text: string): void {
    side.replaceChildren(h('div', { class: 'r-empty' }, text));
  }

  function markTurn(scroll = true): void {
    let target: HTMLElement | null = null;
    for (const el of Array.from(side.querySelectorAll<HTMLElement>('[data-turn]'))) {
      const on = Number(el.dataset.turn) === state.app.turn;
      el.classList.toggle('r-current', on);
      if (on && !target) target = el;
    }
    if (scroll && target) target.scrollIntoView({ block: 'nearest' });
    const counter = side.querySelector<HTMLElement>('#r-turn-counter');
    if (counter) counter.textContent = turnCounterText(state.app.turn, Number(counter.dataset.total));
    persist(ctx);
  }

  function renderDetail(): void {
    const d = state.detail;
    if (!d) {
      showText(state.total ? 'Select a trajectory (click, or j/k then Enter).' : '');
      return;
    }
    state.app.turn = Math.max(0, Math.min(state.app.turn, Math.max(0, d.record.turns.length - 1)));
    main.classList.remove('r-columns');
    resetScroll(`detail:${d.key}`);
    side.replaceChildren(
      ...detailView(ctx, d, (index) => {
        state.app.turn = index;
        markTurn();
      }),
    );
    markTurn(false);
  }

  function renderCompare(): void {
    const c = state.compare;
    if (!c) {
      showText('Loading the comparison…');
      return;
    }
    main.classList.add('r-columns');
    resetScroll(`compare:${c.a.key}:${c.b.key}`);
    side.replaceChildren(...compareView(ctx, c, backToDetail));
    markTurn(false);
  }

  function renderGroup(): void {
    const g = state.group;
    if (!g) {
      showText('Loading the group…');
      return;
    }
    main.classList.add('r-columns');
    resetScroll(`group:${g.groupId}`);
    side.replaceChildren(...groupView(g, backToDetail));
    markTurn(false);
  }

  function render(): void {
    main.classList.toggle('r-columns', state.app.view !== 'detail');
    if (state.app.view === 'compare') renderCompare();
    else if (state.app.view === 'group') renderGroup();
    else renderDetail();
  }

  function updateReward(): void {
    const old = document.getElementById('r-reward');
    if (old) old.replaceWith(rewardSection(state.detail));
    else renderDetail();
  }

  function turnCount(): number {
    const { compare, group, detail } = state;
    if (state.app.view === 'compare' && compare) {
      return Math.max(compare.a.record.turns.length, compare.b.record.turns.length);
    }
    if (state.app.view === 'group' && group) return Math.max(0, ...group.members.map((m) => m.record.turns.length));
    return detail?.record.turns.length ?? 0;
  }

  function stepTurn(delta: number): void {
    const n = turnCount();
    if (n === 0) return;
    state.app.turn = Math.max(0, Math.min(n - 1, state.app.turn + delta));
    markTurn();
  }

  function backToDetail(): void {
    state.app.view = 'detail';
    const key = state.cursor >= 0 ? state.keys[state.cursor] : undefined;
    if (key !== undefined && state.detail?.key !== key) host.post({ type: 'select', key });
    render();
    persist(ctx);
  }

  function openCompare(): void {
    list.cancelPendingSelect();
    const ks = state.app.markedIds.map((id) => keyOfId(state, id)).filter((k): k is number => k !== undefined);
    if (ks.length !== 2) {
      say(ctx, 'Mark two trajectories with x (or Space) to compare them.');
      return;
    }
    state.app.view = 'compare';
    state.app.turn = 0;
    host.post({ type: 'compare', a: ks[0], b: ks[1] });
    persist(ctx);
  }

  function openGroup(): void {
    list.cancelPendingSelect();
    const row = cursorRow(state);
    if (!row) {
      say(ctx, 'Select a trajectory first.');
      return;
    }
    state.app.view = 'group';
    state.app.turn = 0;
    host.post({ type: 'group', key: row.key });
    persist(ctx);
  }

  return {
    render,
    renderDetail,
    renderCompare,
    renderGroup,
    updateReward,
    showText,
    markTurn,
    stepTurn,
    openCompare,
    openGroup,
    backToDetail,
  };
}
