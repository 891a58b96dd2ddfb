/**
 * The layers of Abada (docs/architecture.md), checked by `npm run lint` as a compiler would:
 *
 *   web/            the dashboard; talks to the engine over GraphQL only
 *   server/graphql  resolvers → engine commands; never the database
 *   server/worker   talks to the engine over GraphQL only
 *   server/telemetry  tracing every layer uses; imports only server/shared
 *   server/engine   the domain, in folders whose index.ts is their public face
 *   server/db       schema, pool, migrations, notifier: the bottom layer
 *
 * Paths are relative to the directory cruised from (the repository root, or a fixture's root in
 * test/lint/layering.test.ts, which applies these same rules to a tree built to break them).
 * Type-only imports count (`tsPreCompilationDeps`): a type import is still a dependency on the layer.
 */

/** Everything that sits above server/db. */
const ABOVE_DB = [
  '^server/(engine|graphql|worker|cli|demo|client|metrics|auth|web)/',
  '^server/(main|app|cli)\\.ts$',
  '^(web|bench|soak|scripts|test)/',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'db-imports-nothing-above',
      severity: 'error',
      comment: 'server/db is the bottom layer: schema, pool, migrations, notifier. It imports no layer above it.',
      from: { path: '^server/db/' },
      to: { path: ABOVE_DB },
    },
    {
      name: 'graphql-not-to-db',
      severity: 'error',
      comment:
        'Resolvers call engine commands; only server/db and server/engine touch the database. Events reach ' +
        'server/graphql through the engine.',
      from: { path: '^server/graphql/' },
      to: { path: '^server/db/' },
    },
    {
      name: 'auth-not-to-db',
      comment:
        'Sign-in (OpenID Connect, cookies, access tokens) stores sessions and principals through engine ' +
        'commands; only server/db and server/engine touch the database.',
      severity: 'error',
      from: { path: '^server/auth/' },
      to: { path: '^server/db/' },
    },
    {
      name: 'engine-not-to-auth',
      comment: 'The engine knows principals and sessions, not how HTTP signs people in.',
      severity: 'error',
      from: { path: '^server/(engine|db)/' },
      to: { path: '^server/auth/' },
    },
    {
      name: 'worker-not-to-engine-or-db',
      severity: 'error',
      comment:
        'The Agent Worker runs on other machines and talks to the engine over GraphQL only; what both ' +
        'sides share lives in server/shared.',
      from: { path: '^server/worker/' },
      to: { path: '^server/(engine|db)/' },
    },
    {
      name: 'telemetry-is-a-leaf',
      severity: 'error',
      comment:
        'server/telemetry (OpenTelemetry spans, trace context, the log mixin) is used by every layer — engine, ' +
        'GraphQL, worker, demo servers, logs — so it imports none of them: only @opentelemetry/* and server/shared.',
      from: { path: '^server/telemetry/' },
      to: { path: '^server/', pathNot: ['^server/telemetry/', '^server/shared/'] },
    },
    {
      name: 'web-not-to-server',
      severity: 'error',
      comment: 'The dashboard talks to the engine over GraphQL, typed from schema.graphql.',
      from: { path: '^web/' },
      to: { path: '^server/' },
    },
    {
      name: 'engine-folders-through-index',
      severity: 'error',
      comment:
        'An engine folder is reached from another engine folder only through its index.ts, its public face.',
      from: { path: '^server/engine/([^/]+)/' },
      to: {
        path: '^server/engine/[^/]+/',
        pathNot: ['^server/engine/$1/', '^server/engine/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'engine-through-index-from-outside',
      severity: 'error',
      comment:
        'Code outside server/engine reaches an engine folder only through its index.ts. Tests may reach ' +
        'inside to test a part on its own.',
      from: { pathNot: ['^server/engine/[^/]+/', '^test/'] },
      to: {
        path: '^server/engine/[^/]+/',
        pathNot: '^server/engine/[^/]+/index\\.ts$',
      },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included: a cycle hides which module is the lower one.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that cannot be resolved escapes every rule above.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)node_modules/', '(^|/)\\.next/', '^test/fixtures/', '^bench/results/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
