// What the replay app does with each message from the host: a new list (or the same file again), the keys a filter
// kept, score batches, an opened trajectory and its reward explanation, a comparison, a group, errors.
import { unpackRows, type ToApp } from '../../src/protocol/replay';
import { persist, type ReplayContext } from './context';
import type { FilterBar } from './filters';
import type { TrajectoryList } from './list';
import type { SidePane } from './side';
import { keyOfId } from './state';
import { renderCounts, renderNotice, say } from './status';

interface Views {
  filters: FilterBar;
  list: TrajectoryList;
  side: SidePane;
}

export function handleMessage(ctx: ReplayContext, views: Views, m: ToApp): void {
  const { host, state, ui } = ctx;
  const { filters, list, side } = views;
  const app = state.app;
  switch (m.type) {
    case 'loading':
      ui.title.textContent = `Replay: ${m.label}`;
      say(ctx, `Reading ${m.file}…`);
      return;
    case 'list': {
      const sameFile = app.file === m.file;
      state.summaries = unpackRows(m.rows);
      ui.title.textContent = `Replay: ${m.label}`;
      ui.title.setAttribute('title', m.file);
      state.invalid = m.invalid;
      state.truncated = m.truncated;
      state.panels = m.panels;
      state.panelName = m.panel;
      state.message = null;
      if (!sameFile) {
        // Another file starts unfiltered, at the top: a search, a facet or a range typed for one file would hide rows
        // of the next (a drill-down's trajectory among them), and the old list's keys mean nothing in the new rows.
        filters.reset();
        state.keys = [];
        state.cursor = -1;
        ui.viewport.scrollTop = 0;
        app.file = m.file;
        app.selectedId = null;
        app.markedIds = [];
        app.view = 'detail';
        app.turn = 0;
        app.scrollTop = 0;
        state.detail = null;
        state.compare = null;
        state.group = null;
        state.restorePending = false;
      } else if (app.selectedId) {
        state.restorePending = true;
      }
      renderNotice(ctx);
      filters.send();
      return;
    }
    case 'view': {
      if (m.seq < state.seq) return; // an answer to a filter the user has already changed
      const selectedId = app.selectedId;
      state.keys = m.keys;
      state.total = m.total;
      state.facets = m.facets;
      filters.render();
      const keys = state.keys;
      const at = selectedId === null ? -1 : keys.findIndex((k) => state.summaries[k].id === selectedId);
      const before = state.cursor;
      state.cursor = at >= 0 ? at : keys.length ? Math.min(Math.max(state.cursor, 0), keys.length - 1) : -1;
      // The open trajectory's row is scrolled into view when the list moves it (a filter, a drill-down's file); a
      // view that leaves it in place (score batches under a verdict filter) leaves the scrolling alone.
      let reveal = at >= 0 && at !== before;
      const restoring = state.restorePending;
      if (restoring) {
        reveal = false;
        state.restorePending = false;
        // The trajectory that was open comes back even when the filter hides its row.
        const key = selectedId === null ? undefined : keyOfId(state, selectedId);
        if (app.view === 'compare') side.openCompare();
        else if (key !== undefined && app.view === 'group') host.post({ type: 'group', key });
        else if (key !== undefined) {
          state.restoreTurn = app.turn;
          host.post({ type: 'select', key });
        }
      }
      list.render(true);
      // Scrolled after the render: the spacer has the new list's height, so the scroll is not clamped to the old one's.
      if (restoring) ui.viewport.scrollTop = app.scrollTop;
      if (reveal) list.revealCursor();
      if (restoring || reveal) list.render();
      renderCounts(ctx);
      if (keys.length === 0 && state.total > 0) side.showText('No trajectory matches these filters.');
      else if (!state.detail && !state.compare && !state.group) side.render();
      return;
    }
    case 'scores': {
      for (const u of m.updates) {
        const s = state.summaries[u.key];
        if (!s) continue;
        s.verdict = u.verdict;
        s.reward = u.reward;
        if (u.verdict && s.verdictSource === null) s.verdictSource = 'computed';
      }
      state.scoring = {
        done: m.done,
        total: m.total,
        running: m.running,
        scored: m.scored ?? m.done,
        unscored: m.unscored ?? null,
      };
      renderCounts(ctx);
      if (m.updates.length) list.render(true);
      return;
    }
    case 'detail': {
      state.detail = { key: m.key, record: m.record, explanation: null, explainError: null };
      app.turn = m.turn ?? state.restoreTurn ?? 0;
      state.restoreTurn = null;
      // Its row is put in view even when the cursor is already on it: a panel restored on its saved scroll (a
      // drill-down that reloaded the hidden panel saved it before the list was there) can have it out of sight.
      const at = state.keys.indexOf(m.key);
      if (at >= 0) {
        state.cursor = at;
        list.render(true);
        list.revealCursor();
        list.render();
      }
      app.selectedId = m.record.id;
      // A detail the user has already left (c or g pressed while it loaded) waits for "d".
      if (app.view === 'detail') side.renderDetail();
      persist(ctx);
      return;
    }
    case 'explanation':
      if (state.detail && state.detail.key === m.key) {
        state.detail.explanation = m.explanation;
        state.detail.explainError = m.error;
        if (app.view === 'detail') side.updateReward();
      }
      return;
    case 'compare':
      state.compare = { a: m.a, b: m.b, diff: m.diff };
      if (m.show) {
        app.markedIds = [m.a.record.id, m.b.record.id];
        app.view = 'compare';
        app.turn = 0;
        list.render(true);
        persist(ctx);
      }
      if (app.view === 'compare') side.renderCompare();
      return;
    case 'group':
      state.group = { groupId: m.groupId, panel: m.panel, members: m.members, stats: m.stats };
      if (app.view === 'group') side.renderGroup();
      return;
    case 'error':
      say(ctx, m.message, true);
      return;
    case 'empty':
      side.showText(m.message);
      return;
  }
}
