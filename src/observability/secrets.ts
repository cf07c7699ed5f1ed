/**
 * Last line of defence for logs: whatever a message says, a full API key or a JWT never reaches the
 * output. (Credentials are also kept out of log objects by `redact`; this catches them inside text,
 * e.g. an error message that quotes a header.)
 */
const API_KEY = /svc_[0-9A-Za-z]{38}/g;
// Three base64url segments, the first two starting with `eyJ` ("{"): a JWT, signed or not.
const JWT = /eyJ[\w-]{4,}\.eyJ[\w-]{4,}\.[\w-]*/g;

export function scrubSecrets(text: string): string {
  if (!text.includes('svc_') && !text.includes('eyJ')) return text;
  return text.replace(API_KEY, (key) => `${key.slice(0, 12)}[REDACTED]`).replace(JWT, '[REDACTED JWT]');
}

/** Object paths whose values are replaced before a log line is written. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'headers.cookie',
  '*.password',
  '*.token',
  '*.access',
  '*.refresh',
  '*.key',
  '*.secret',
  'password',
  'token',
  'access',
  'refresh',
  'key',
  'secret',
];
