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
    },
  },
  {
    files: ['renderer/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { ...reactHooks.configs.recommended.rules },
  },
  prettier,
);
