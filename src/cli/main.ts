// The `quarry` command: its subcommands, help, and exit codes (0 ok, 1 the work failed, 2 bad input).
import type { Command, CliIO } from './command';
import { UsageError, EXIT } from './command';
import { execCommand } from './commands/exec';
import { execBatchCommand } from './commands/execBatch';
import { schemaCommand } from './commands/schema';
import { evalCommand } from './commands/eval';
import { odtCommand } from './commands/odt';
import { rewardCommand } from './commands/reward';
import { scoreCommand } from './commands/score';
import { askCommand } from './commands/ask';
import { benchCommand } from './commands/bench';
import { exportCommand } from './commands/export';
import { doctorCommand } from './commands/doctor';
import { checkpointsCommand } from './commands/checkpoints';
import { serveEnvCommand } from './commands/serveEnv';
import { mcpCommand } from './commands/mcp';
import { jobsCommand } from './commands/jobs';
import { dataCommand } from './commands/data';
import { trainCommand } from './commands/train';
import { testsuiteCommand } from './commands/testsuite';

const commands: Command[] = [
  execCommand,
  execBatchCommand,
  schemaCommand,
  evalCommand,
  rewardCommand,
  scoreCommand,
  odtCommand,
  askCommand,
  benchCommand,
  testsuiteCommand,
  exportCommand,
  dataCommand,
  doctorCommand,
  trainCommand,
  checkpointsCommand,
  serveEnvCommand,
  mcpCommand,
  jobsCommand,
];

function help(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'quarry — agentic text-to-SQL over SQLite: run, score and evaluate.',
    '',
    'Usage: quarry <command> [options]',
    '',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `quarry <command> --help` for a command's options.",
  ].join('\n');
}

export async function main(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(help() + '\n');
    return name ? EXIT.ok : EXIT.badInput;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`quarry: unknown command '${name}'\n\n${help()}\n`);
    return EXIT.badInput;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(command.usage + '\n');
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (
      err instanceof UsageError ||
      (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ||
      (err as { code?: string }).code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' ||
      (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL'
    ) {
      io.stderr.write(`quarry ${name}: ${(err as Error).message}\n\n${command.usage}\n`);
      return EXIT.badInput;
    }
    throw err;
  }
}
