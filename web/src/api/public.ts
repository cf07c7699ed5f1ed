import createClient from 'openapi-fetch';
import { ApiError, apiErrorFrom, NETWORK_DETAIL } from './http';
import type { paths } from './schema';

/**
 * The API as its OpenAPI document describes it (`schema.d.ts`, generated from /openapi.json by
 * `npm run generate:api`): paths, parameters, bodies and answers are checked by the type checker, so a
 * change of the API that breaks the dashboard breaks `npm run typecheck`.
 */
export type ApiClient = ReturnType<typeof createClient<paths, JsonMedia>>;
/** The dashboard reads JSON (a query's event stream is not for it). */
export type JsonMedia = `${string}/json`;

export const CLIENT_OPTIONS = {
  baseUrl: '',
  credentials: 'omit',
  cache: 'no-store',
  headers: { Accept: 'application/json' },
} as const;

/** For the calls that need no credentials: sign-up, sign-in, refresh, sign-out. */
export const publicClient: ApiClient = createClient<paths, JsonMedia>(CLIENT_OPTIONS);

export interface Result<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's data, or its error body as an ApiError (a network failure as one with status 0). */
export async function unwrap<T>(call: Promise<Result<T>>): Promise<T> {
  let result: Result<T>;
  try {
    result = await call;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw new ApiError(0, NETWORK_DETAIL);
  }
  if (result.response.ok) return result.data as T;
  throw apiErrorFrom(result.response.status, result.error);
}
