/**
 * Is this failure "the database cannot be reached" rather than a bug? Such errors become a 503 with a
 * `detail` (see the global exception filter), never a 500. They arrive raw from `pg`/`pg-pool` when a
 * connection cannot be made, or wrapped by TypeORM (`driverError`) when a query's connection dies.
 */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
]);
// SQLSTATE class 08 (connection exception), 57P01-57P03 (admin/crash shutdown, cannot connect now),
// 53300 (too many connections).
const SQLSTATE = /^(08000|08001|08003|08004|08006|08007|57P01|57P02|57P03|53300)$/;
const MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Client was closed and is not queryable',
  'Connection refused',
  'the database system is',
];

// TypeORM releases a query runner whose connection died; the transaction's COMMIT then throws the
// first, and a query the transaction still sends through its EntityManager the second (seen in CI when
// PostgreSQL stopped in the middle of an API key's creation).
const ERROR_NAMES = new Set(['QueryRunnerAlreadyReleasedError', 'QueryRunnerProviderAlreadyReleasedError']);

export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 3) return false;
  const { code, message, driverError, cause, name } = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
    name?: unknown;
  };
  if (typeof name === 'string' && ERROR_NAMES.has(name)) return true;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATE.test(code))) return true;
  if (typeof message === 'string' && MESSAGES.some((text) => message.includes(text))) return true;
  // AggregateError from a connect that tried several addresses.
  const errors = (error as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(driverError, depth + 1) || isDatabaseUnavailable(cause, depth + 1);
}

export const DATABASE_UNAVAILABLE_DETAIL = 'The database is temporarily unavailable. Retry with exponential back-off.';
