import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import SlowestFirst from './test/helpers/sequencer.js';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node resolves `graphql` to its CommonJS build for packages loaded outside Vite (yoga, graphql-ws);
    // our code must get the same instance, or schema types "come from another realm".
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/e2e/**', 'node_modules/**'],
    globalSetup: ['test/helpers/global-setup.ts'],
    pool: 'forks',
    // Three workers on two cores: a worker spends much of its time waiting on the processes its tests
    // start (engines, workers, PostgreSQL), so two left the cores a third idle (vitest 328 s → 297 s).
    maxWorkers: 3,
    // One process per worker for all its files, not one per file: loading the engine's modules again for
    // each of the 109 files cost more than the tests (test/engine, scenarios and security: 190 s of CPU
    // isolated, 79 s not). Every file starts its own engine on its own database; none mocks a module.
    isolate: false,
    sequence: { sequencer: SlowestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
