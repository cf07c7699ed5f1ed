import { InitialSchema1763700000000 } from './1763700000000-InitialSchema.js';
import { Knowledge1763700100000 } from './1763700100000-Knowledge.js';
import { BillingAndChat1763700200000 } from './1763700200000-BillingAndChat.js';
import { TokenLifecycle1763700310000 } from './1763700310000-TokenLifecycle.js';

/** Every migration, oldest first. Listed explicitly so the build, the CLI and Jest load the same set. */
export const migrations = [
  InitialSchema1763700000000,
  Knowledge1763700100000,
  BillingAndChat1763700200000,
  TokenLifecycle1763700310000,
];
