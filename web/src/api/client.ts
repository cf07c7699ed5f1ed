import createClient from 'openapi-fetch';
import { ApiError } from './http';
import { type ApiClient, CLIENT_OPTIONS, type JsonMedia, type Result, unwrap } from './public';
import type { paths } from './schema';
import { session } from './session';

/** The typed client with the person's JWT, refreshed first when it is about to expire. */
const signedIn: ApiClient = createClient<paths, JsonMedia>(CLIENT_OPTIONS);
signedIn.use({
  async onRequest({ request }) {
    request.headers.set('Authorization', `Bearer ${await session.accessToken()}`);
    return request;
  },
});

/**
 * An authenticated call with the person's JWT. A 401 gets one retry with a freshly refreshed access
 * token (nothing was done on a 401); a second 401 ends the session.
 */
export async function api<T>(call: (client: ApiClient) => Promise<Result<T>>): Promise<T> {
  try {
    return await unwrap(call(signedIn));
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 401 || error.code === 'session_expired') throw error;
  }
  await session.refresh();
  try {
    return await unwrap(call(signedIn));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) session.expire();
    throw error;
  }
}
