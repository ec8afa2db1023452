import { readdirSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';
import js from '@eslint/js';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// The layers of src/, lowest first (ARCHITECTURE.md, habit 11); a file imports from its own
// layer or a lower one. Whatever else sits in src/ (roles, cli, app.ts, container, config,
// main.ts) is the top, so a new folder there starts at the top rather than unchecked.
const LAYERS = [['core'], ['platform'], ['ocsf', 'pipeline'], ['connectors'], ['modules']];
const LOWER = LAYERS.flat();
const TOP = readdirSync(new URL('./src', import.meta.url)).filter((entry) => !LOWER.includes(entry));
const dirs = (names) => names.map((name) => `./src/${name}`);

/** One zone per layer: nothing in it may import from any layer above. */
function layerZones() {
  return LAYERS.map((layer, i) => {
    const above = [...LAYERS.slice(i + 1).flat(), ...TOP];
    return {
      target: dirs(layer),
      from: dirs(above),
      message: `${layer.join(' and ')} may not import from a higher layer (order: ${LAYERS.map((l) => l.join('/')).join(' < ')} < top; ARCHITECTURE.md habit 11).`,
    };
  });
}

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
    files: [
      'src/core/**/*.ts',
      'src/pipeline/**/*.ts',
      'src/modules/*/service.ts',
      'src/modules/*/service-*.ts',
      'src/modules/config-bundle/plan*.ts',
      'src/modules/delivery-status/dlq.ts',
      'src/modules/normalization/ports.ts',
    ],
    ignores: ['src/modules/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: ['fastify', 'bullmq', 'kysely', 'ioredis', 'pg', '@electric-sql/*'] },
      ],
      'no-restricted-properties': ['error', { object: 'process', property: 'env' }],
    },
  },
  {
    // The layering, type-only imports included. Tests are exempt: a medium test of a module
    // starts the whole container (test/support, roles) to exercise it through the API.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // Imports name the emitted .js; the source beside it is .ts.
      'import-x/resolver-next': [createNodeResolver({ extensionAlias: { '.js': ['.ts', '.js'] } })],
    },
    rules: {
      'import-x/no-restricted-paths': [
        'error',
        { basePath: fileURLToPath(new URL('.', import.meta.url)), zones: layerZones() },
      ],
    },
  },
  {
    // Files stay small (ARCHITECTURE.md, habit 9): split by responsibility, never packed.
    // Exempt: the table types of the database (checked against the migrations by
    // schema.test.ts) and the Sigma log source tables, which are data.
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.test.ts', 'src/platform/db/schema.ts', 'src/pipeline/detect/sigma/logsources-*.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }] },
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
