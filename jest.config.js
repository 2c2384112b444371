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
  maxWorkers: 2,
  // A worker whose heap earlier files have grown is replaced: the memory-measuring tests collect garbage often.
  workerIdleMemoryLimit: '768MB',
};
