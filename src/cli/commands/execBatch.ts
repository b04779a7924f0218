import type { Command } from '../command';

// Placeholder while the command is being built in this session; replaced before the session ends.
export const execBatchCommand: Command = {
  name: 'exec-batch',
  summary: '(being built)',
  usage: 'quarry exec-batch',
  async run(_argv, io) {
    io.stderr.write('quarry exec-batch: not available in this build\n');
    return 2;
  },
};
