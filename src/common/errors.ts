/** An error's `detail`: a fixed message, or one naming a field or an uploaded file (busboy caps a part's headers at 16 KiB). */
export const DETAIL_MAX = 20_000;

/** The most characters of a client's own value an error message repeats back. */
export const ECHO_MAX = 64;

/**
 * A value the client sent, as an error message repeats it: clipped to ECHO_MAX characters with an
 * ellipsis, so that a long invalid value is not sent back (and stored for a replay) in full, once per
 * field it fails.
 */
export function echoed(text: string): string {
  if (text.length <= ECHO_MAX) return text;
  const clipped = text.slice(0, ECHO_MAX);
  // Never end on half of a surrogate pair (it could not be encoded).
  return `${/[\uD800-\uDBFF]$/.test(clipped) ? clipped.slice(0, -1) : clipped}…`;
}

/**
 * Typed errors thrown by services and guards. Each knows its status and the exact body the interface
 * promises; the global filter only serializes them. Services never build HTTP responses.
 */
export abstract class ApiError extends Error {
  abstract readonly status: number;
  readonly headers: Record<string, string> = {};
  /** Sent exactly as `body()` gives it, in no route's error dialect (a replayed answer, stored as sent). */
  readonly verbatim: boolean = false;

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

/** The most fields one 400 lists: a body of thousands of unknown fields is not echoed back whole. */
export const FIELDS_SHOWN_MAX = 20;

export class ValidationFailedError extends ApiError {
  readonly status = 400;
  readonly fields: FieldErrors;
  constructor(fields: FieldErrors) {
    // Field names can be the client's own (an unknown field): clipped like any echoed value.
    const shown = Object.entries(fields)
      .slice(0, FIELDS_SHOWN_MAX)
      .map(([field, messages]): [string, string[]] => [echoed(field), messages]);
    const [field, messages] = shown[0] ?? ['body', ['Invalid request.']];
    super(`${field}: ${messages[0]}`);
    this.fields = Object.fromEntries(shown);
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

/**
 * 404. Bare, it is the unknown route's verbatim `Not found.`; `NotFoundError.named` says which resource
 * (`Domain "medicine" not found.`). Callers use the same message whether the resource does not exist
 * or belongs to another organization, so it reveals nothing the client did not send.
 */
export class NotFoundError extends ApiError {
  readonly status = 404;
  constructor(detail = 'Not found.') {
    super(detail);
  }

  static named(kind: string, name: string): NotFoundError {
    // The name is the client's (a path segment can be as long as a URL): clipped as every echo is.
    return new NotFoundError(`${kind} ${JSON.stringify(echoed(name))} not found.`);
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

/** The organization's files (`POST /v1/files`) would pass FILES_STORAGE_MB_PER_ORGANIZATION. */
export class FilesStorageFullError extends BadRequestError {
  constructor(limitMb: number) {
    super(
      `Your organization's files may take at most ${limitMb} MB (FILES_STORAGE_MB_PER_ORGANIZATION), and this file would pass that; delete files to upload more.`,
    );
  }
}

/** Attaching the file would take the organization's files and their indexed copies past FILES_STORAGE_MB_PER_ORGANIZATION. */
export class AttachStorageFullError extends BadRequestError {
  constructor(limitMb: number) {
    super(
      `Your organization's files and their copies in vector stores may take at most ${limitMb} MB (FILES_STORAGE_MB_PER_ORGANIZATION), and attaching this file would pass that; detach or delete files to attach more.`,
    );
  }
}

/** The organization already has as many files waiting to be indexed in vector stores as it may. */
export class AttachesBusyError extends ApiError {
  readonly status = 429;
  constructor(limit: number) {
    super(
      `Your organization already has ${limit} files waiting to be indexed in vector stores (the most it may); attach more once some are done.`,
    );
    this.headers['Retry-After'] = '30';
  }
}

/** Too many of one organization's attaches, detaches and file deletions waiting on this instance (AttachAdmission). */
export class AttachWritesBusyError extends ApiError {
  readonly status = 429;
  constructor(waiting: number) {
    super(
      `Too many attach, detach or file deletion requests from your organization at once (${waiting} waiting); retry in a second.`,
    );
    this.headers['Retry-After'] = '1';
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

/** 409: the request conflicts with the resource's state (a duplicate name, deleting what must stay). */
export class ConflictError extends ApiError {
  readonly status = 409;
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

/**
 * A new `Idempotency-Key` while the organization's stored answers fill its budget
 * (IDEMPOTENCY_ORG_BUDGET_MB): refused before the request runs, and not stored, so a retry once
 * older keys have expired runs normally.
 */
export class IdempotencyStoreFullError extends ApiError {
  readonly status = 429;
  constructor(budgetMb: number) {
    super(
      `This organization's Idempotency-Key store is full (${budgetMb} MB of answers kept for 24 hours); the request was not run. ` +
        'Retry it once older keys have expired, or send it without Idempotency-Key.',
    );
    // Expired keys are purged every minute: the soonest a retry can find room.
    this.headers['Retry-After'] = '60';
  }
}

/** Why a request's answer was sent once but not kept for replays. */
export type AnswerNotKept = 'too_large' | 'store_full';

/**
 * The retry of a request that ran and answered, but whose answer was not kept (larger than
 * IDEMPOTENCY_MAX_ANSWER_KB, or the organization's store was full then): never run a second time.
 */
export class IdempotentAnswerNotKeptError extends ApiError {
  readonly status = 410;
  constructor(reason: AnswerNotKept, maxAnswerKb: number) {
    const why =
      reason === 'too_large'
        ? `it was larger than ${maxAnswerKb} KB`
        : "the organization's Idempotency-Key store was full";
    super(
      `The request with this Idempotency-Key already ran and was answered, but its answer was not kept for replays (${why}). ` +
        'It was not run again.',
    );
  }
}
