// Layering and cycle rules, checked by `npm run lint` (part of `npm test`).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'engine-knows-no-pipeline',
      comment: 'The engine (packages/engine) knows nothing of RC1: it never imports lib/, rules/ or rc1.build.ts.',
      severity: 'error',
      from: { path: '^packages/engine/' },
      to: { path: '^(lib|rules|test|bench|scripts)/|^rc1[.]build[.]ts$' },
    },
    {
      name: 'pipeline-through-public-api',
      comment: "RC1 code (lib/, rules/, rc1.build.ts) uses the engine only through its public API ('rc1-build').",
      severity: 'error',
      from: { path: '^(lib|rules)/|^rc1[.]build[.]ts$' },
      to: { path: '^packages/engine/', pathNot: '^packages/engine/(src/api/|dist/api[.]js$|package[.]json$)' },
    },
    {
      name: 'nothing-below-cli-imports-cli',
      comment: 'cli/ is the top of the engine: commands use the workspace, the build and the scheduler, never the other way.',
      severity: 'error',
      from: { path: '^packages/engine/src/', pathNot: '^packages/engine/src/cli/' },
      to: { path: '^packages/engine/src/cli/' },
    },
    {
      name: 'scheduler-knows-only-its-executor',
      comment: 'The scheduler (WHEN) depends on the TargetExecutor interface it declares, not on how a target is carried out (docs/engine.md).',
      severity: 'error',
      from: { path: '^packages/engine/src/scheduler/' },
      to: { path: '^packages/engine/src/', pathNot: '^packages/engine/src/(scheduler|util)/' },
    },
    {
      name: 'executor-gets-the-workspace-injected',
      comment: 'The target executor sees the workspace only through its ports (executor/ports.ts), so it runs in memory in tests.',
      severity: 'error',
      from: { path: '^packages/engine/src/executor/' },
      to: { path: '^packages/engine/src/(workspace|build|cli)/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycles: a cycle makes load order (and the code closures of rules) fragile.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['types', 'import', 'default'], extensions: ['.ts', '.js', '.mjs'] },
    preserveSymlinks: false,
  },
};
