import type { Command } from '../command';

// Placeholder while the command is being built in this session; replaced before the session ends.
export const schemaCommand: Command = {
  name: 'schema',
  summary: '(being built)',
  usage: 'quarry schema',
  async run(_argv, io) {
    io.stderr.write('quarry schema: not available in this build\n');
    return 2;
  },
};
