import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';

// Workflows run in Temporal's deterministic sandbox: no Node built-in at all (generated, both `x`
// and `node:x`), and the layers that do I/O only as types.
const nodeBuiltins = builtinModules.filter((m) => !m.startsWith('_')).flatMap((m) => [m, `node:${m}`]);

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.venv/**', '.tools/**', 'data/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    // workflow code: the workflows, and what the sandbox runs of the operations (an index.ts only lists its folder's parts)
    files: ['workflows/**/*.ts', '**/*.workflow.ts', 'operations/registry.ts', 'operations/define.ts', 'operations/*/runner.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows are deterministic: no Node built-ins.' })),
          patterns: [
            { group: ['**/activities/**', '**/activities', '**/*.activities', '**/workers/*', '**/api/*', '**/api/**'], allowTypeImports: true, message: 'Workflows may import activities, workers and the API as types only.' },
            { group: ['**/repository', '**/entity', '**/service', '**/routes', '**/*.routes'], allowTypeImports: true, message: 'Workflows do no I/O: use an activity.' },
            { group: ['**/db/*', '**/engines/*', '**/engines/**', '**/bin/*'], message: 'Workflows do no I/O: use an activity.' },
          ],
        },
      ],
      'no-restricted-properties': ['error', { object: 'Date', property: 'now', message: 'Use workflow time, not the wall clock.' }],
      'no-restricted-globals': ['error', { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' }, { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' }],
    },
  },
);
