// The keys: Ctrl+Enter runs the corrected SQL, Escape closes the help or leaves a field, arrows move between tag
// chips (a adds a tag), and outside text fields the shortcuts keys.ts maps (j/k move, 1/2/3 verdict, e, t, s, ?).
import type { LabelContext } from './context';
import type { Actions } from './actions';
import { keyAction } from './keys';

function inField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t?.closest?.('input, textarea, select, vscode-text-field, vscode-text-area, vscode-dropdown');
}

export function bindKeys(ctx: LabelContext, a: Actions): void {
  const { form, ui } = ctx;
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      if (e.target === form.sqlBox || !inField(e)) {
        e.preventDefault();
        a.runSql();
      }
      return;
    }
    if (e.key === 'Escape') {
      if (!ui.help.hidden) {
        a.toggleHelp(false);
        e.preventDefault();
        return;
      }
      if (inField(e)) {
        (e.target as HTMLElement).blur();
        ui.formPane.focus();
        e.preventDefault();
      }
      return;
    }
    if (inField(e) || e.ctrlKey || e.metaKey || e.altKey) return;
    const chip = (e.target as HTMLElement | null)?.closest?.('.l-chip') as HTMLElement | null;
    if (chip && (e.key === 'ArrowRight' || e.key === 'ArrowLeft')) {
      const chips = Array.from(form.tagRow.querySelectorAll<HTMLElement>('.l-chip'));
      const i = chips.indexOf(chip) + (e.key === 'ArrowRight' ? 1 : -1);
      chips[(i + chips.length) % chips.length]?.focus();
      e.preventDefault();
      return;
    }
    if (chip && e.key === 'a') {
      form.newTag.focus();
      e.preventDefault();
      return;
    }
    const action = keyAction(e.key);
    if (!action) return;
    e.preventDefault();
    switch (action.kind) {
      case 'move':
        a.go(action.delta);
        return;
      case 'verdict':
        a.verdictAndNext(action.verdict);
        return;
      case 'editSql':
        form.sqlBox.focus();
        return;
      case 'tags':
        (form.tagRow.querySelector('.l-chip') as HTMLElement | null)?.focus();
        return;
      case 'save':
        a.save();
        return;
      case 'help':
        a.toggleHelp();
        return;
    }
  });
}
