// One linter for the whole repo. Typed rules catch forgotten awaits: a floating promise in a
// worker is a lost job.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const PASS_THROUGH =
  'Pass the optional value straight through and declare the field `?: T | undefined`; keep a conditional spread only where the receiver treats undefined unlike absent, with `// eslint-disable-next-line no-restricted-syntax -- <why>`.';

/** Every eslint-disable comment says why after `--`: a kept exception is a decision, not noise. */
const directiveReasons = {
  rules: {
    'require-reason': {
      meta: {
        type: 'suggestion',
        schema: [],
        messages: { missing: 'Say why after `--` in this eslint-disable comment.' },
      },
      create(context) {
        return {
          Program() {
            for (const comment of context.sourceCode.getAllComments()) {
              if (/^\s*eslint-disable/u.test(comment.value) && !/\s--\s+\S/u.test(comment.value))
                context.report({ loc: comment.loc, messageId: 'missing' });
            }
          },
        };
      },
    },
  },
};

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/.baton/**',
      '**/test-artifacts/**',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { baton: directiveReasons },
    rules: { 'baton/require-reason': 'error' },
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false } },
      ],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-throw-literal': 'error',
      // Conventions of docs/decisions/2026-12-04-optional-fields-pass-through.md (#26): optional
      // fields are declared `?: T | undefined` so a value passes straight through; a conditional
      // spread stays only where the receiver treats undefined unlike absent, saying why in the
      // disable comment. One private-member dialect: `#`.
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "SpreadElement > ConditionalExpression[test.operator='==='][test.right.type='Identifier'][test.right.name='undefined'][consequent.type='ObjectExpression'][consequent.properties.length=0]",
          message: PASS_THROUGH,
        },
        {
          selector:
            "SpreadElement > ConditionalExpression[test.operator='!=='][test.right.type='Identifier'][test.right.name='undefined'][alternate.type='ObjectExpression'][alternate.properties.length=0]",
          message: PASS_THROUGH,
        },
        {
          selector:
            ':matches(MethodDefinition, PropertyDefinition, TSParameterProperty)[accessibility=/^(private|protected)$/]',
          message: 'Use a `#` private member (one private-member dialect, #26).',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ignores: ['apps/dashboard/public/**'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The dashboard's browser modules: shipped as they are, no build step. The globals are the
    // browser's the code uses (no Node ones); tsconfig.public.json type-checks them (checkJs).
    files: ['apps/dashboard/public/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        history: 'readonly',
        navigator: 'readonly',
        fetch: 'readonly',
        EventSource: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        FormData: 'readonly',
        Intl: 'readonly',
        Node: 'readonly',
        HTMLElement: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        requestAnimationFrame: 'readonly',
        confirm: 'readonly',
        alert: 'readonly',
        innerWidth: 'readonly',
        console: 'readonly',
      },
    },
  },
  {
    // CommonJS on purpose (checking that `require` of our packages works).
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', console: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
