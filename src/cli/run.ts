// Entry point of dist/cli.js: runs the command line and turns its result into the exit code.
import { main } from './main';

main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() }).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`quarry: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exitCode = 70;
  },
);
