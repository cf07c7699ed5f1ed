/**
 * The connection readiness pings the database on, provided by the database module: its own, so a
 * pool busy with slow requests does not take the instance out of rotation (nor does the probe wait
 * behind them for a connection). Readiness asks "is the database there?", not "is the pool free?".
 */
export const READINESS_CONNECTION = Symbol('READINESS_CONNECTION');
