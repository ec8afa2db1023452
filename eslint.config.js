import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'data/**',
      'node_modules/**',
      'coverage/**',
      'web/src/api/schema.d.ts',
      'console-screenshots/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // Domain code stays free of frameworks and the environment (ARCHITECTURE.md, habit 2).
    files: ['src/core/**/*.ts', 'src/pipeline/**/*.ts', 'src/modules/*/service.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['fastify', 'bullmq', 'kysely', 'ioredis', 'pg', '@electric-sql/*'] },
      ],
      'no-restricted-properties': ['error', { object: 'process', property: 'env' }],
    },
  },
  {
    // The console (web/): the rules of hooks.
    files: ['web/**/*.tsx', 'web/**/*.ts'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'warn' },
  },
  {
    files: ['bench/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts', '**/*.test.ts'],
    rules: { 'no-console': 'off' },
  },
);
