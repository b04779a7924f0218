// Finding workspace files for the Databases view and the pickers, without Quarry's own files: `.quarry/**` holds
// labels, jobs, exports and the trajectory store, none of which is a database to browse or a trajectory file to pick
// from a list (the store is offered on its own, as "Workspace store"). node_modules is left out too.
import * as vscode from 'vscode';
import { isQuarryOwnPath, QUARRY_DIR } from '../core/workspace/quarryLayout';

/** What findFiles leaves out: dependencies and Quarry's own folder. */
const EXCLUDE_GLOB = `{**/node_modules/**,**/${QUARRY_DIR}/**}`;

/** Workspace files matching `glob`, without node_modules and `.quarry/**`; a failed search is an empty list. */
export async function findWorkspaceFiles(glob: string, max: number): Promise<vscode.Uri[]> {
  const found = await vscode.workspace.findFiles(glob, EXCLUDE_GLOB, max).then(
    (u) => u,
    () => [] as vscode.Uri[],
  );
  // The exclude glob is the fast path; this also catches a `.quarry` folder the glob syntax could miss.
  return found.filter((u) => !isQuarryOwnPath(u.fsPath));
}

/** Trajectory JSONL files for a picker (up to 50). */
export function findTrajectoryFiles(): Promise<vscode.Uri[]> {
  return findWorkspaceFiles('**/*.jsonl', 50);
}
