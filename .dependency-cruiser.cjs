/**
 * The house of src/ (see docs/ARCHITECTURE.md): folders are rooms, each on a floor, and imports only run
 * down. A room may import its own files and any room on a lower floor, never one on its floor or above.
 * `npm run lint:deps` checks it.
 */

/** Bottom first. Each entry is one floor: the folders under src/ that stand on it. */
const FLOORS = [
  ['config'],
  ['common'],
  ['lifecycle'],
  ['observability', 'http'],
  ['database', 'rate-limit', 'idempotency'],
  // The published document's building blocks: they quote the messages and limits of the rooms below.
  ['openapi'],
  // Webhooks stand low: the outbox is written by triggers, so no room above has to call them.
  ['retrieval', 'webhooks'],
  ['domains', 'collections'],
  ['documents', 'billing'],
  ['organizations', 'api-keys'],
  ['auth', 'query'],
  ['chat', 'dashboard', 'teams'],
  ['openai-compat', 'mcp'],
];
/** The top floor: the composition root (app.module.ts, app.ts, request-pipeline.ts, main.ts, cli.ts) sits at src/'s own level. */
const ROOT = '^src/[^/]+$';

const folders = (names) => `^src/(${names.join('|')})/`;

/** One rule per floor: nothing on it imports a sibling room, a room above, or the composition root. */
const noArrowUp = FLOORS.map((floor, level) => ({
  name: `imports-run-down-from-${floor.join('+')}`,
  comment: `${floor.join(', ')} may import only the floors below (${FLOORS.slice(0, level).flat().join(', ') || 'libraries only'}).`,
  severity: 'error',
  from: { path: folders(floor), pathNot: '\\.d\\.ts$' },
  to: {
    path: [folders(FLOORS.slice(level).flat()), ROOT],
    // Its own room is allowed: the path captured by `from` is the room the file lives in.
    pathNot: '^src/$1/',
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle ties rooms together so that neither can change or be read alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'common-depends-on-nothing-of-ours',
      comment: 'common/ is the ground every feature stands on: it imports libraries only.',
      severity: 'error',
      from: { path: '^src/common/' },
      to: { path: '^src/', pathNot: '^src/common/' },
    },
    ...noArrowUp,
    {
      name: 'every-room-on-a-floor',
      comment: 'A folder under src/ that is on no floor escapes the rules above: add it to FLOORS.',
      severity: 'error',
      from: { path: '^src/', pathNot: [folders(FLOORS.flat()), ROOT] },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are arrows too: they tie the rooms' shapes together.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages whose files are reached only through their `exports` map (@modelcontextprotocol/sdk's
    // `./*`): resolved as Node resolves an ESM import.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'node', 'default'] },
  },
};
