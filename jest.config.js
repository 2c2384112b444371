const { availableParallelism } = require('node:os');

/** Tests run through HTTP against a real database: PGlite by default, Postgres when TEST_DATABASE_URL is set. */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    // import() stays native so ESM-only packages (the schema engine's glue) load as ESM.
    module: { type: 'commonjs', ignoreDynamic: true },
  },
];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.(t|j)sx?$': swc },
  // Each test file's database is a copy of one migrated per run (test/support/template.ts).
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  // The suite is CPU-bound but not all the time (timers, child processes, sockets): half a worker more
  // than the CPUs keeps them busy. 2 CPUs, 2026-11-29: 3 workers instead of 2 took PGlite's run from
  // 387 s to 324–349 s and Postgres's from 228 s to 200 s. The cap keeps a large machine within the
  // Postgres server's connections (34 at most seen with 3 workers) and the workers' memory.
  maxWorkers: Math.min(4, Math.max(2, Math.ceil(availableParallelism() * 1.5))),
  // A worker whose heap earlier files have grown is replaced: the memory-measuring tests collect garbage often.
  workerIdleMemoryLimit: '768MB',
};
