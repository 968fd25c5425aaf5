/**
 * The import rules of docs/architecture.md §2, checked by `npm test` (scripts/test.sh):
 * `npx depcruise src --config .dependency-cruiser.cjs`. Type-only imports count: a circle of types is a circle.
 */
const PURE = '^src/(model|domain|time)/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import circles in src/, type-only imports included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'pure-layers-stay-pure',
      comment: 'model, domain and time import only each other and errors.ts: no I/O, no engine, no interface.',
      severity: 'error',
      from: { path: PURE },
      to: { path: '^src/', pathNot: [PURE, '^src/errors\\.ts$'] },
    },
    {
      name: 'domain-below-model',
      comment: 'The registry (model) builds on the rules (domain), never the other way round.',
      severity: 'error',
      from: { path: '^src/(domain|time)/' },
      to: { path: '^src/model/' },
    },
    {
      name: 'time-at-the-bottom',
      comment: 'time imports neither the domain nor the model.',
      severity: 'error',
      from: { path: '^src/time/' },
      to: { path: '^src/(domain|model)/' },
    },
    {
      name: 'store-interface-only',
      comment: 'The engine and the services use the Store interface, never Kysely or its implementation.',
      severity: 'error',
      from: { path: '^src/(engine|services)/' },
      to: { path: ['^src/store/kysely-', '^src/store/migrations', 'node_modules/kysely/'] },
    },
    {
      name: 'interfaces-through-services',
      comment:
        'The HTTP interfaces reach jobs and objects through services: no engine, and of the store only the ' +
        'interface (its type and what its errors mean).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: ['^src/engine/', '^src/store/'], pathNot: '^src/store/store\\.ts$' },
    },
    {
      name: 'api-routes-use-services-only',
      comment:
        'The JSON and XML interfaces and the dashboard do not touch the store at all, not even its interface: ' +
        'what they read or write goes through a service (the app and its ops routes hold the store for health).',
      severity: 'error',
      from: { path: '^src/http/(json|xml|ui)/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'services-use-the-kernel-entry-points',
      comment: 'Services reach the engine through the Engine (engine.ts) and the kernel (kernel.ts) only.',
      severity: 'error',
      from: { path: '^src/services/' },
      to: { path: '^src/engine/', pathNot: '^src/engine/(engine|kernel)\\.ts$' },
    },
    {
      name: 'kernel-imports-no-reaction',
      comment: 'The kernel knows no reaction: chains, events, recurrences, locks, questions and alerts register on it.',
      severity: 'error',
      // The kernel's own parts (its actions, records, rows, definition snapshot, status move) hold to it too.
      from: { path: '^src/engine/(kernel|kernel-actions|kernel-types|job-rows|definition-snapshot|status-move)\\.ts$' },
      to: {
        path: '^src/engine/',
        pathNot:
          '^src/engine/(effects|submit-frames|windows|operator-message|kernel|kernel-actions|kernel-types|job-rows|definition-snapshot|status-move)\\.ts$',
      },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
