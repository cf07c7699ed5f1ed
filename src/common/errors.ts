/** An error's `detail`: a fixed message, or one naming a field or an uploaded file (busboy caps a part's headers at 16 KiB). */
export const DETAIL_MAX = 20_000;

/**
 * Typed errors thrown by services and guards. Each knows its status and the exact body the interface
 * promises; the global filter only serializes them. Services never build HTTP responses.
 */
export abstract class ApiError extends Error {
  abstract readonly status: number;
  readonly headers: Record<string, string> = {};

  constructor(detail: string) {
    // An answer, not a fault: no stack trace. Capturing one cost more than the rest of a refusal (a
    // 429 or 401 under a flood spent 10 % of the service's CPU in this constructor).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
  }

  body(): Record<string, unknown> {
    return { detail: this.message };
  }
}

export type FieldErrors = Record<string, string[]>;

export class ValidationFailedError extends ApiError {
  readonly status = 400;
  constructor(readonly fields: FieldErrors) {
    const [field, messages] = Object.entries(fields)[0] ?? ['body', ['Invalid request.']];
    super(`${field}: ${messages[0]}`);
  }
  static field(field: string, message: string): ValidationFailedError {
    return new ValidationFailedError({ [field]: [message] });
  }
  body() {
    return { detail: this.message, fields: this.fields };
  }
}

/** A 400 about the state of a resource rather than one field. */
export class BadRequestError extends ApiError {
  readonly status = 400;
}

/** A client error raised by the framework or the body parser, with our wording. */
export class HttpStatusError extends ApiError {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(detail);
  }
}

const WWW_AUTHENTICATE = { 'WWW-Authenticate': 'Bearer realm="api"' };

abstract class UnauthorizedError extends ApiError {
  readonly status = 401;
  readonly headers = WWW_AUTHENTICATE;
}

export class NotAuthenticatedError extends UnauthorizedError {
  constructor() {
    super('Authentication credentials were not provided.');
  }
}

export class InvalidCredentialsError extends UnauthorizedError {
  constructor() {
    super('No active account found with the given credentials');
  }
}

/** An access token that is expired, tampered, unsigned, or not an access token: simplejwt's body. */
export class AccessTokenInvalidError extends UnauthorizedError {
  constructor() {
    super('Given token not valid for any token type');
  }
  body() {
    return {
      detail: this.message,
      code: 'token_not_valid',
      messages: [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is invalid or expired' }],
    };
  }
}

/** A refresh (or verified) token that is bad, expired, revoked or of the wrong type. */
export class TokenInvalidError extends UnauthorizedError {
  constructor() {
    super('Token is invalid or expired');
  }
  body() {
    return { detail: this.message, code: 'token_not_valid' };
  }
}

export class ApiKeyInvalidError extends UnauthorizedError {
  constructor() {
    super('Invalid or expired API key. Check that the key is active and has not expired.');
  }
}

export class ApiKeyNotAcceptedError extends UnauthorizedError {
  constructor() {
    super('This endpoint accepts only a JWT access token, not an API key.');
  }
}

export class PermissionDeniedError extends ApiError {
  readonly status = 403;
  constructor() {
    super('You do not have permission to perform this action.');
  }
}

/** An API key used on a route whose scope it was not given. */
export class MissingScopeError extends ApiError {
  readonly status = 403;
  constructor(scope: string) {
    super(`This API key lacks the scope "${scope}".`);
  }
}

export class NotFoundError extends ApiError {
  readonly status = 404;
  constructor() {
    super('Not found.');
  }
}

export class MethodNotAllowedError extends ApiError {
  readonly status = 405;
  constructor(method: string, allowed: string[]) {
    super(`Method "${method}" not allowed.`);
    this.headers.Allow = allowed.join(', ');
  }
}

export class PayloadTooLargeError extends ApiError {
  readonly status = 413;
  constructor(limitBytes: number) {
    super(`Request body is too large; the limit is ${formatBytes(limitBytes)}.`);
  }
}

export class ThrottledError extends ApiError {
  readonly status = 429;
  constructor(retryAfterSeconds: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    super(`Request was throttled. Expected available in ${seconds} seconds.`);
    this.headers['Retry-After'] = String(seconds);
  }
}

export class ServiceUnavailableError extends ApiError {
  readonly status = 503;
  constructor(detail = 'The service is temporarily unavailable. Retry with exponential back-off.') {
    super(detail);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

export class QuotaExhaustedError extends ApiError {
  readonly status = 402;
  constructor(private readonly quota: { creditsTotal: number; creditsUsed: number; resetsAt: string }) {
    super('Credit quota exhausted. Upgrade your plan or wait for your quota to reset.');
    this.headers['X-Credits-Remaining'] = String(Math.max(0, quota.creditsTotal - quota.creditsUsed));
    this.headers['X-Credits-Reset'] = quota.resetsAt;
  }
  body() {
    return {
      detail: this.message,
      code: 'quota_exhausted',
      credits_total: this.quota.creditsTotal,
      credits_used: this.quota.creditsUsed,
      resets_at: this.quota.resetsAt,
    };
  }
}

/** The calling key's own `monthly_credit_limit` is spent (the organization may have credits left). */
export class KeyCreditLimitExhaustedError extends ApiError {
  readonly status = 402;
  constructor(private readonly key: { creditsTotal: number; creditsUsed: number; resetsAt: string }) {
    super("This API key's monthly credit limit is exhausted.");
    // What this caller may still spend: nothing through this key until the reset.
    this.headers['X-Credits-Remaining'] = String(Math.max(0, key.creditsTotal - key.creditsUsed));
    this.headers['X-Credits-Reset'] = key.resetsAt;
  }
  body() {
    return {
      detail: this.message,
      code: 'key_credit_limit_exhausted',
      credits_total: this.key.creditsTotal,
      credits_used: this.key.creditsUsed,
      resets_at: this.key.resetsAt,
    };
  }
}

export class DomainNotAllowedError extends ApiError {
  readonly status = 403;
  constructor() {
    super('Your organization does not have access to this domain.');
  }
}

/** An upstream model or retrieval failure: the spec's transient 500, with nothing of the upstream leaked. */
export class UpstreamFailureError extends Error {}

/** An uploaded file over `MAX_UPLOAD_BYTES`. */
export class FileTooLargeError extends ApiError {
  readonly status = 413;
  constructor(limitBytes: number) {
    super(`The uploaded file is too large; the limit is ${formatBytes(limitBytes)}.`);
  }
}

/** This instance is already reading as many uploads as it may hold in memory (MAX_UPLOADS_IN_FLIGHT). */
export class UploadsBusyError extends ServiceUnavailableError {
  constructor(limit: number) {
    super(`Too many uploads are being processed right now (at most ${limit} at once); retry in a few seconds.`);
    this.headers['Retry-After'] = '2';
  }
}

/** The organization already has as many searches running and waiting as one instance takes (SearchGate). */
export class SearchesBusyError extends ApiError {
  readonly status = 429;
  constructor(limit: number) {
    super(`Too many searches from your organization at once (${limit} run at a time); retry in a second.`);
    this.headers['Retry-After'] = '1';
  }
}

/** An `Idempotency-Key` whose first request has not answered yet (contract, "Idempotent POSTs"). */
export class IdempotencyKeyInProgressError extends ApiError {
  readonly status = 409;
  constructor() {
    super('A request with this Idempotency-Key is still in progress.');
  }
}

/** An `Idempotency-Key` sent again with another method, path or body. */
export class IdempotencyKeyReusedError extends ApiError {
  readonly status = 422;
  constructor() {
    super('This Idempotency-Key was already used with a different request.');
  }
}

/** An `Idempotency-Key` header that is empty, too long, or not visible ASCII. */
export class IdempotencyKeyInvalidError extends BadRequestError {
  constructor() {
    super('Idempotency-Key must be 1 to 255 visible ASCII characters.');
  }
}

/** A multipart upload with an `Idempotency-Key`: its parts arrive after the key must be claimed. */
export class IdempotencyKeyOnUploadError extends BadRequestError {
  constructor() {
    super('Idempotency-Key is not accepted on a multipart upload; send the document as JSON to retry it safely.');
  }
}
