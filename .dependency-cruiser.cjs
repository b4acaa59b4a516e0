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
