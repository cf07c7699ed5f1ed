/**
 * A reason not to start that the operator can act on (the embedded store is in use, the port is
 * taken): main.ts prints its message alone and exits non-zero, without a stack trace.
 */
export class StartupRefusal extends Error {}
