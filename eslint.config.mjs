// @ts-check
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'reports/**',
      'coverage/**',
      'eslint.config.mjs',
      'jest.config.js',
      'test/support/progress-reporter.js',
      // The CLI's 10-line CommonJS launcher; the CLI itself is src/cli.
      'bin/**',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read configuration through src/config.' },
      ],
    },
  },
  {
    files: [
      'src/config/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'scripts/**/*.ts',
      '**/*.spec.ts',
    ],
    rules: { 'no-restricted-properties': 'off' },
  },
);
