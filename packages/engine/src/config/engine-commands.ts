// The engine's own subcommands. A pipeline may add commands of its own (definePipeline({ commands }))
// under any other name that is not a target's. (Their arguments and options: cli/definition.ts.)
export const ENGINE_COMMANDS: readonly string[] = [
  'status',
  'graph',
  'audit',
  'clean',
  'gc',
  'build',
  'watch',
  'failpack',
  'check-determinism',
  'cache-keygen',
  'why',
  'log',
  'diff',
  'report',
  'sync',
  'completion',
  'server',
];
