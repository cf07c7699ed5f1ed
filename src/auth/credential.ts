import type { HttpRequest } from '../common/request.js';
import { API_KEY_PREFIX } from '../api-keys/key-format.js';

export interface PresentedCredential {
  kind: 'api_key' | 'jwt';
  value: string;
}

const CREDENTIAL = Symbol('credential');
type WithCredential = HttpRequest & { [CREDENTIAL]?: PresentedCredential | null };

/**
 * What the caller presented, read once per request and kept on it: the early-refusal hook, the composite
 * guard and both Passport strategies (passport-jwt's extractor included) share this one reading. `X-API-Key` is always an API key; a bearer value is
 * an API key when it starts with `svc_` and a JWT otherwise (spec 5.3). Another scheme is no credential.
 */
export function presentedCredential(request: HttpRequest): PresentedCredential | null {
  const cached = (request as WithCredential)[CREDENTIAL];
  if (cached !== undefined) return cached;
  const credential = readCredential(request);
  (request as WithCredential)[CREDENTIAL] = credential;
  return credential;
}

/** The bearer JWT presented, for passport-jwt's `jwtFromRequest` (null: none, or an API key). */
export function presentedJwt(request: HttpRequest): string | null {
  const credential = presentedCredential(request);
  return credential?.kind === 'jwt' && credential.value !== '' ? credential.value : null;
}

function readCredential(request: HttpRequest): PresentedCredential | null {
  const authorization = request.headers.authorization?.trim();
  const bearer = authorization?.match(/^Bearer\s+(\S+)$/i)?.[1];
  if (bearer) return { kind: bearer.startsWith(API_KEY_PREFIX) ? 'api_key' : 'jwt', value: bearer };
  if (authorization && /^Bearer$/i.test(authorization)) return { kind: 'jwt', value: '' };
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return { kind: 'api_key', value: apiKey.trim() };
  return null;
}
