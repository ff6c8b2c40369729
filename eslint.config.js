// Lint rules that catch defects; layout is Prettier's (.prettierrc.json) and boundaries are dependency-cruiser's
// (.dependency-cruiser.cjs). docs/architecture.md, "The rules, and what checks them", says why each rule is here.
// Findings that existed when a rule was turned on, in files being changed at the time, are listed in
// eslint-suppressions.json: fix one, then run `npx eslint --prune-suppressions` to take it off the list.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['node_modules/', 'dist/', 'test/fixtures/', 'test/vendor/', 'docs/', 'bench/profiles/', '.gateway-dev/']),
  {
    // console/ has its own tsconfig.json (DOM, Preact's JSX), which the project service finds for its files.
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A type import written as a value import loads the module at run time for nothing (or for its side effects).
      // (`typeof import('…')` stays allowed: bench/ types modules it loads from another checkout that way.)
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      // `_name` marks what is left out on purpose (a destructured field dropped with its rest, an unused parameter).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // A `return promise` inside try/catch skips the catch when the promise rejects.
      '@typescript-eslint/return-await': ['error', 'error-handling-correctness-only'],
      // A deprecated API is one a dependency upgrade removes.
      '@typescript-eslint/no-deprecated': 'error',
      // Rejecting with an AbortSignal's reason or re-rejecting a caught error is passing an error on, not making one.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Fastify plugins and hooks are async by contract, with or without an await inside.
      '@typescript-eslint/require-await': 'off',
      // Ports are interfaces with method signatures implemented by closures and passed as callbacks (io.err,
      // store.append): the rule cannot tell those from class methods, and every finding of it read here was one.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Tests read untyped JSON from HTTP answers, and send deprecated fields on purpose, because clients do.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-deprecated': 'off',
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly', __dirname: 'readonly' } },
  },
);
