// The linter (issue #32): type-aware typescript-eslint over core, electron and renderer. What it is
// for above all: every promise has an owner (no-floating-promises, ignoreVoid off: `void p` is not
// an owner; a promise is awaited, returned, or given a .catch that logs a coded error).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'native/build/**',
      'release/**',
      '**/*.js',
      '**/*.cjs',
      '**/*.mjs',
      'core/netstack/lwip/**',
    ],
  },
  {
    files: ['core/**/*.ts', 'electron/**/*.ts', 'renderer/src/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false, ignoreIIFE: false }],
      '@typescript-eslint/no-misused-promises': 'error',
      // Off: an async method without an await is how a method fulfils a Promise-returning interface
      // (Egress.bindUdp, close) and turns a synchronous throw into the rejection its callers handle.
      '@typescript-eslint/require-await': 'off',
      // `_name` marks what a destructuring leaves out on purpose ({ logger: _l, ...rest }).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
  {
    files: ['renderer/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    // The two classic hook rules. Not the plugin's React Compiler rules (refs, immutability,
    // set-state-in-effect): the window does not run the compiler, and its windowed tables read
    // their scroll position from a hook that hands back a ref on purpose.
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      // zustand actions are closures created in the slices (no `this`); the interfaces only name them as methods.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  prettier,
);
