import { QueryFailedError, QueryRunnerAlreadyReleasedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isDatabaseUnavailable } from '../../src/lifecycle/database-faults.js';

/** What pg reports, with its SQLSTATE. */
const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable (a 503, not a 500)', () => {
  it.each<[string, Error]>([
    ['a COMMIT on a query runner released when its connection died', new QueryRunnerAlreadyReleasedError()],
    ['a query sent through the EntityManager of such a transaction', new QueryRunnerProviderAlreadyReleasedError()],
    ['a query whose server shut down (57P01)', new QueryFailedError('SELECT 1', [], pgError('57P01', 'terminating'))],
    ['a refused connection', pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
  ])('is true for %s', (_, error) => expect(isDatabaseUnavailable(error)).toBe(true));

  it.each<[string, Error]>([
    ['a syntax error (a bug)', new QueryFailedError('SELEC 1', [], pgError('42601', 'syntax error'))],
    ['a unique violation', new QueryFailedError('INSERT', [], pgError('23505', 'duplicate key'))],
    ['any other error', new TypeError('x is undefined')],
  ])('is false for %s', (_, error) => expect(isDatabaseUnavailable(error)).toBe(false));
});
