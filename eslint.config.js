// Flat config: typescript-eslint's strict and stylistic type-checked rules, with formatting left to Prettier.
import prettier from 'eslint-config-prettier';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', 'web/dist/', 'coverage/', 'web/src/api/schema.d.ts'] },
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // tsconfig.json covers src/, test/ and bench/; web/tsconfig.json covers web/src (found per file).
        projectService: { allowDefaultProject: ['*.js', 'scripts/*.mjs', 'web/vite.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Nest modules are classes with only a decorator: the framework's idiom, not a namespace in disguise.
      '@typescript-eslint/no-extraneous-class': ['error', { allowWithDecorator: true }],
      // A number in a message or a URL prints as expected; `any`, objects and nullish values stay flagged.
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowAny: false,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowNumber: true,
          allowRegExp: false,
        },
      ],
      // `() => setOpen(false)` in event handlers and callbacks is clearer than adding braces.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // A no-op is sometimes the point: a TypeORM Logger hook we do not use, a close() with nothing to close.
      '@typescript-eslint/no-empty-function': ['error', { allow: ['arrowFunctions', 'methods'] }],
      // `||` on flags is boolean logic, on text it means "when empty", and inside Boolean(…) "either is
      // truthy": none of these wants `??`.
      '@typescript-eslint/prefer-nullish-coalescing': [
        'error',
        { ignoreBooleanCoercion: true, ignorePrimitives: { boolean: true, string: true } },
      ],
    },
  },
  {
    // @nestjs/swagger reads response shapes from classes, but presenters build them as plain objects (and
    // Nest's option "classes" are interfaces in all but name): the class is only a type, no prototype is lost.
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  {
    // The OpenAPI document is plain JSON that @nestjs/swagger builds and we edit in place: no Map to use.
    files: ['src/openapi/openapi.ts'],
    rules: { '@typescript-eslint/no-dynamic-delete': 'off' },
  },
  {
    // Answerers share one async-iterable interface; the extractive one has nothing to await.
    files: ['src/query/answerers/extractive.answerer.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // Preact's event attributes take async handlers; the handlers catch their own errors.
    files: ['web/src/**/*.tsx'],
    rules: { '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }] },
  },
  {
    // Outside secure contexts there is no Clipboard API: the deprecated command is the fallback on purpose.
    files: ['web/src/components/OneTimeSecretDialog.tsx'],
    rules: { '@typescript-eslint/no-deprecated': 'off' },
  },
  {
    // supertest's `response.body` and pg's rows are `any`: the tests' assertions are what check their shape.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // So are the JSON bodies the tests parse themselves (SSE events, a fake model's requests).
      '@typescript-eslint/no-explicit-any': 'off',
      // `match![1]` after an assertion: a null there fails the test anyway, with a clear stack.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Jest's idiom: `let app: TestApp` set in beforeAll, `app?.close()` in afterAll for when beforeAll
      // failed; and polling loops whose flag another closure clears. The rule reads both as always true.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        {
          allowAny: true,
          allowBoolean: false,
          allowNever: false,
          allowNullish: false,
          allowNumber: true,
          allowRegExp: false,
        },
      ],
    },
  },
  {
    // Plain JavaScript (benchmarks, build scripts, configs) has no types to check against.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    extends: [tseslint.configs.disableTypeChecked],
  },
  prettier,
);
