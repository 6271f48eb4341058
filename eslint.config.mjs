// ESLint for the service (src), its tests, scripts and benchmark, and the web client.
// Type-checked rules (typescript-eslint's recommendedTypeChecked) on every TypeScript file; formatting is
// Prettier's job, so eslint-config-prettier turns off every rule that would argue with it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'test-results/**',
      'web/dist/**',
      'src/infra/prisma/generated/**',
      'web/src/api/schema.d.ts',
      '.data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
  },
  {
    files: ['web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
    languageOptions: { globals: { ...globals.browser } },
  },
  {
    // e2e tests read supertest's `res.body` and SQL rows, which their libraries type as `any`; what those
    // bodies hold is checked at run time against the OpenAPI document (test/support/openapi-responses.ts)
    // and by the assertions themselves. Every other type-checked rule applies. docs/adr/0001-lint-and-format.md
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    ...tseslint.configs.disableTypeChecked,
  },
  prettier,
);
