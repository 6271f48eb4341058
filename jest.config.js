/**
 * One Jest run for unit tests (src/**\/*.spec.ts), service tests (test/service/**\/*.service-spec.ts: the
 * real modules without HTTP, docs/adr/0059) and e2e tests (test/**\/*.e2e-spec.ts).
 * The e2e tests share one isolated database created by test/support/global-setup.ts.
 * The Swagger CLI plugin runs here too, so the tested OpenAPI document is the one production serves.
 */
/** @type {import('jest').Config} */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/test/service/**/*.service-spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
  ],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The generated Prisma client imports its siblings as './x.js'; here they are the .ts sources.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: 'tsconfig.json',
        diagnostics: { warnOnly: false },
        astTransformers: {
          before: ['<rootDir>/test/support/swagger-plugin-transformer.js'],
        },
      },
    ],
  },
  // Every response of a test app is checked against the OpenAPI document (test/support/openapi-responses.ts).
  setupFilesAfterEnv: ['<rootDir>/test/support/openapi-after-each.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
  verbose: false,
};
