// The layers, checked by `make lint` (dependency-cruiser). From the bottom:
//   lib/        pure vocabulary, time, errors, config types
//   engines/    tools, storage, egress (they know nothing of jobs or operations)
//   db/, jobs/, webhooks/    the domains
//   activities/, operations/, workflows/   steps, the operations built from them, and the
//               workflows that run them (an operation's runner is workflow code)
//   api/, workers/, bin/     entry points
// A module may import its own layer and the ones below. Type-only imports may close a loop in one
// place: the queue table (workers/queues.ts) types the activity proxies the workflows call
// (workflows/activity-plan.ts), and the registry types the runners that it lists.
const LAYERS_ABOVE = {
  lib: '^(engines|db|jobs|webhooks|activities|operations|workflows|api|workers|bin)/',
  engines: '^(db|jobs|webhooks|activities|operations|workflows|api|workers|bin)/',
  operations: '^(api|workers|bin)/',
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-value-cycles',
      comment: 'Modules that import each other for values load in an order that depends on who came first. Type-only imports may loop.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'lib-is-the-bottom',
      comment: 'lib/ is pure vocabulary: it imports nothing of the service but lib/.',
      severity: 'error',
      from: { path: '^lib/' },
      to: { path: LAYERS_ABOVE.lib },
    },
    {
      name: 'engines-know-no-domain',
      comment: 'An engine wraps a tool or a store; qualities, formats and model sizes it shares with operations live in lib/media-vocabulary.ts.',
      severity: 'error',
      from: { path: '^engines/' },
      to: { path: LAYERS_ABOVE.engines },
    },
    {
      name: 'operations-below-entry-points',
      comment: 'An operation is called by the entry points, never the reverse: a view receives what it renders (operations/output-view.ts).',
      severity: 'error',
      from: { path: '^operations/' },
      to: { path: LAYERS_ABOVE.operations },
    },
    {
      name: 'nothing-imports-the-workers',
      comment: 'The workers are an entry point; only the queue table is read below them, as types, by the workflows\' activity proxies.',
      severity: 'error',
      from: { path: '^(lib|engines|db|jobs|webhooks|activities|operations|workflows)/' },
      to: { path: '^workers/', pathNot: '^workers/queues[.]ts$' },
    },
    {
      name: 'the-queue-table-as-types-only',
      comment: 'Workflows read the queue table\'s types; its value would load every tool into the sandbox.',
      severity: 'error',
      from: { path: '^(lib|engines|db|jobs|webhooks|activities|operations|workflows)/' },
      to: { path: '^workers/queues[.]ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'nothing-imports-bin',
      comment: 'bin/ holds the command line and process wiring: the top.',
      severity: 'error',
      from: { pathNot: '^bin/' },
      to: { path: '^bin/' },
    },
    {
      name: 'workflows-stay-in-the-sandbox',
      comment: 'Workflow code runs in Temporal\'s deterministic sandbox: no Node built-in, and the layers that do I/O as types only.',
      severity: 'error',
      from: { path: '(^workflows/|[.]workflow[.]ts$|^operations/(registry|define)[.]ts$|^operations/[^/]+/runner[.]ts$)' },
      to: {
        dependencyTypesNot: ['type-only'],
        path: '(^(engines|db|api|workers|bin)/|^activities/|[.]activities[.]ts$|/(repository|entity|service|routes)[.]ts$)',
      },
    },
    {
      name: 'workflows-no-node-builtins',
      comment: 'Not even as a type: the sandbox has no Node built-in to give.',
      severity: 'error',
      from: { path: '(^workflows/|[.]workflow[.]ts$|^operations/(registry|define)[.]ts$|^operations/[^/]+/runner[.]ts$)' },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^(dist|test|node_modules|\\.venv|\\.tools|data)/|[.](spec|test)[.]ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: {
      dot: { collapsePattern: '^(node_modules/[^/]+|lib|engines/[^/]+|db|jobs|webhooks|activities|operations/[^/]+|workflows|api/[^/]+|workers|bin)' },
      archi: { collapsePattern: '^(node_modules/[^/]+|lib|engines|db|jobs|webhooks|activities|operations|workflows|api|workers|bin)' },
    },
  },
};
