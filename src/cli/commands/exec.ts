import type { Command } from '../command';

// Placeholder while the command is being built in this session; replaced before the session ends.
export const execCommand: Command = {
  name: 'exec',
  summary: '(being built)',
  usage: 'quarry exec',
  async run(_argv, io) {
    io.stderr.write('quarry exec: not available in this build\n');
    return 2;
  },
};
