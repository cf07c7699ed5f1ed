export interface WorkerScript {
  url: URL;
  execArgv?: string[];
  /** Resident memory the way it is run adds to each worker (MB): the swc hooks, run from the sources. */
  extraResidentMb?: number;
}

/** What swc's module hooks add to a worker's resident memory: measured 45-52 MB on Node 20 and 24. */
const TS_HOOKS_RESIDENT_MB = 64;

/**
 * The worker module `name` (without extension) beside the module at `base` (its `import.meta.url`).
 * Built, that is the compiled `.js`. Run from the TypeScript sources (Jest), a worker process does not
 * go through Jest's transform, so it gets the project's swc module hooks (scripts/ts-hooks.mjs).
 */
export function workerScript(base: string, name: string): WorkerScript {
  const compiled = new URL(`./${name}.js`, base);
  if (!base.endsWith('.ts')) return { url: compiled };
  const hooks = new URL('../../../scripts/ts-hooks.mjs', import.meta.url);
  const register = `import { register } from 'node:module'; register(${JSON.stringify(hooks.href)});`;
  return {
    url: new URL(`./${name}.ts`, base),
    execArgv: ['--import', `data:text/javascript,${encodeURIComponent(register)}`],
    extraResidentMb: TS_HOOKS_RESIDENT_MB,
  };
}
