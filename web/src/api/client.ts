import { readBody, send, type SendOptions } from './http';
import { session } from './session';

/**
 * An authenticated call with the person's JWT. A 401 gets one retry with a freshly refreshed access
 * token (nothing was done on a 401); a second 401 ends the session.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const payload: SendOptions = body instanceof FormData ? { form: body } : body === undefined ? {} : { json: body };
  let response = await send(method, path, { ...payload, token: await session.accessToken() });
  if (response.status === 401) {
    response = await send(method, path, { ...payload, token: await session.refresh() });
    if (response.status === 401) session.expire();
  }
  return readBody<T>(response);
}

/** A call that needs no credentials (sign-up). */
export async function publicApi<T>(method: string, path: string, json?: unknown): Promise<T> {
  return readBody<T>(await send(method, path, { json }));
}
