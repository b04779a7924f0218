import type { Command } from '../command';

// Placeholder while the command is being built in this session; replaced before the session ends.
export const evalCommand: Command = {
  name: 'eval',
  summary: '(being built)',
  usage: 'quarry eval',
  async run(_argv, io) {
    io.stderr.write('quarry eval: not available in this build\n');
    return 2;
  },
};
