/**
 * What an API key may be limited to (CONTRACT, second edition). A key without a list may do everything
 * its owner can; JWTs are never scoped.
 */
export const API_KEY_SCOPES = [
  'query',
  'documents:read',
  'documents:write',
  'chat',
  'usage:read',
  'organization:write',
] as const;

export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export function isApiKeyScope(value: unknown): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly unknown[]).includes(value);
}
