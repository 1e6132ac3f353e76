// The layers, checked by `make lint` (dependency-cruiser). From the bottom:
//   lib/        pure vocabulary, time, errors, validation, config types
//   engines/    tools, storage, egress (they know nothing of jobs or operations)
//   db/         the database: MikroORM set-up, migrations, the service's own tables
//   accounts/, keys/, credits/, uploads/, info/, jobs/, batches/, subscriptions/, webhooks/, platforms/  the domains: entity, repository, service
//   activities/, operations/, workflows/   steps, the operations built from them, and the
//               workflows that run them (an operation's runner and a *.workflow.ts are workflow code)
//   api/, workers/, bin/, and each domain's routes.ts and dashboard pages   entry points
// A module may import its own layer and the ones below, and no import closes a loop, type-only ones
// included (tsPreCompilationDeps: dependency-cruiser reads the TypeScript before compilation, so it
// sees imports that compile away). What the queue table (workers/queues.ts) and the registry know of
// the activities reaches the workflows' proxies by declaration merging (workflows/activity-plan.ts),
// not by an import upward. Two modules name what is above them by design: db/orm.ts opens the
// database with every domain's entity, and the job domain (its service and outputs) is validated,
// priced and shown through the operation registry; the domains' services take the entry points'
// ApiDeps, as types only.
const DOMAINS = '(accounts|keys|credits|uploads|info|jobs|batches|subscriptions|webhooks|platforms)';
/** A domain's HTTP side: its REST routes (routes.ts, <what>.routes.ts) and dashboard pages, entry points like api/. */
const DOMAIN_ADAPTERS = `^${DOMAINS}/(routes|[a-z-]+[.]routes|dashboard[.-][^/]*)[.]ts$`;
const WORKFLOW_CODE = '(^workflows/|[.]workflow[.]ts$|^operations/(registry|define)[.]ts$|^operations/[^/]+/runner[.]ts$)';
const LAYERS_ABOVE = {
  lib: `^(engines|db|${DOMAINS.slice(1, -1)}|activities|operations|workflows|api|workers|bin)/`,
  engines: `^(db|${DOMAINS.slice(1, -1)}|activities|operations|workflows|api|workers|bin)/`,
  db: `^(${DOMAINS.slice(1, -1)}|activities|operations|workflows|api|workers|bin)/`,
  operations: '^(api|workers|bin)/',
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules that import each other for values load in an order that depends on who came first; a loop of types, however it is closed, ties its layers into one. Imports run one way, type-only ones too.',
      severity: 'error',
      from: {},
      to: { circular: true },
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
      name: 'db-below-the-domains',
      comment: 'db/ is how the service reaches its database; the domains build on it. Only db/orm.ts names their entities, to open the database with them.',
      severity: 'error',
      from: { path: '^db/', pathNot: '^db/orm[.]ts$' },
      to: { path: LAYERS_ABOVE.db },
    },
    {
      name: 'domains-below-entry-points',
      comment: "A domain's entity, repository and service serve every entry point (REST, MCP, the OpenAI routes, the dashboard, workers): they import none, except as types (ApiDeps).",
      severity: 'error',
      from: { path: `^${DOMAINS}/`, pathNot: [DOMAIN_ADAPTERS, '[.]workflow[.]ts$'] },
      to: { path: ['^(api|workers|bin)/', DOMAIN_ADAPTERS], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'domains-below-operations',
      comment: 'Operations are built on the domains. The job and batch domains are the exception: the registry validates, prices and shows their jobs, and a batch expands its source with the source steps.',
      severity: 'error',
      from: { path: `^${DOMAINS}/`, pathNot: ['^(jobs|batches|subscriptions)/', DOMAIN_ADAPTERS, '[.]workflow[.]ts$'] },
      to: { path: '^(activities|operations|workflows)/' },
    },
    {
      name: 'operations-below-entry-points',
      comment: 'Steps, operations and workflows are called by the entry points, never the reverse: a view receives what it renders (operations/output-view.ts).',
      severity: 'error',
      from: { path: '^(operations|activities|workflows)/' },
      to: { path: [LAYERS_ABOVE.operations, DOMAIN_ADAPTERS] },
    },
    {
      name: 'nothing-imports-the-workers',
      comment: 'The workers are an entry point: nothing below imports them, not even as types (the queue table declares its activities\' types in workflows/activity-plan.ts).',
      severity: 'error',
      from: { path: `^(lib|engines|db|${DOMAINS.slice(1, -1)}|activities|operations|workflows)/` },
      to: { path: '^workers/' },
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
      from: { path: WORKFLOW_CODE },
      to: {
        dependencyTypesNot: ['type-only'],
        path: '(^(engines|db|api|workers|bin)/|^activities/|[.]activities[.]ts$|/(repository|entity|service|routes)[.]ts$)',
      },
    },
    {
      name: 'workflows-no-node-builtins',
      comment: 'Not even as a type: the sandbox has no Node built-in to give.',
      severity: 'error',
      from: { path: WORKFLOW_CODE },
      to: { dependencyTypes: ['core'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^(dist|test|node_modules|\\.venv|\\.tools|data)/|[.](spec|test)[.]ts$)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
