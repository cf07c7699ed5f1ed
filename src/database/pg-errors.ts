/** PostgreSQL error codes that features turn into client errors (whatever wraps the driver's error). */
function pgCode(error: unknown): string | undefined {
  const candidate = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = candidate?.driverError?.code ?? candidate?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A unique index refused the row: a slug taken, possibly by a concurrent request. */
export const isUniqueViolation = (error: unknown) => pgCode(error) === '23505';

/** A referenced row (domain, organization, region) was deleted meanwhile. */
export const isForeignKeyViolation = (error: unknown) => pgCode(error) === '23503';

/** PostgreSQL broke a lock cycle by failing this transaction; run again, it usually succeeds. */
export const isDeadlock = (error: unknown) => pgCode(error) === '40P01';
