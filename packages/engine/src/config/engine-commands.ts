// The engine's own subcommands. A pipeline may add commands of its own (definePipeline({ commands }))
// under any other name that is not a target's.
export const ENGINE_COMMANDS: readonly string[] = ['status', 'graph', 'audit', 'clean', 'gc', 'build', 'watch', 'failpack', 'check-determinism', 'cache-keygen', 'why', 'log', 'diff', 'report', 'sync'];

/** Options of the build-level parser that take a value (so `-j 2 train` reads `train` as the first word). */
export const VALUE_OPTIONS: ReadonlySet<string> = new Set(['-j', '--jobs', '--format', '--max-size', '-C', '--directory', '--remote-cache', '--sync']);
