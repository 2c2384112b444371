// Lint rules for src/, test/, scripts/ and bench/: typescript-eslint's type-checked recommendations,
// plus the module boundaries the design relies on.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'coverage/**', 'node_modules/**', 'src/generated/**', 'test/graphql/generated/**', 'console/dist/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Unused names are errors unless marked deliberate with a leading underscore (destructuring to drop a field).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Express handlers and type-graphql resolvers are async functions handed to frameworks that await them.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-syntax': ['error', { selector: 'TSNonNullExpression', message: 'No non-null assertions: narrow the type instead.' }],
    },
  },
  {
    // Plain JavaScript (configuration, the prisma-generate wrapper): CommonJS on Node, no type information.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { projectService: false, project: false },
      globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly', console: 'readonly' },
    },
    rules: { ...tseslint.configs.disableTypeChecked.rules, '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The GraphQL infrastructure serves the domain modules, never the other way round (no import cycle).
    files: ['src/graphql/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/modules/**', '../services', '../context'], message: 'src/graphql/ must not depend on the domain modules.' }] },
      ],
    },
  },
  {
    // Tests poke at loosely typed JSON answers on purpose.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // jest.spyOn(service, 'method') and expect(fn) refer to methods without calling them.
      '@typescript-eslint/unbound-method': 'off',
      // Fake servers' handlers are async to match the kit's interface, with or without awaiting.
      '@typescript-eslint/require-await': 'off',
      'no-restricted-syntax': 'off',
    },
  },
  {
    // Every answer the gateway gives a test is validated (test/support/answers.ts): the SDK too goes through gatewaySdk().
    files: ['test/**/*.ts'],
    ignores: ['test/fakes/**', 'test/support/answers.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='OpenAI']",
          message: 'Use gatewaySdk() (test/support/answers.ts): it validates every answer against both API documents.',
        },
      ],
    },
  },
);
