/** An error answer of the API, carrying the `detail` every error body has. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly fields: Record<string, string[]> = {},
    readonly code?: string,
  ) {
    super(detail);
  }

  hasField(name: string): boolean {
    return name in this.fields;
  }

  /** The first message about `name`, without the API's `name: ` prefix; undefined when none. */
  fieldMessage(name: string): string | undefined {
    return name in this.fields ? this.fields[name][0] : undefined;
  }

  /**
   * The detail as a person reads it: a validation error's detail starts with the first bad field's
   * API name (`email: A user with that email already exists.`), which the form shows as a label instead.
   */
  get text(): string {
    const names = Object.keys(this.fields);
    if (names.length === 0) return this.detail;
    const prefix = `${names[0]}: `;
    return this.detail.startsWith(prefix) ? this.detail.slice(prefix.length) : this.detail;
  }
}

export const NETWORK_DETAIL = 'Could not reach the service. Check your connection and try again.';

/** Whatever was thrown, as an ApiError whose detail can be shown. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, error instanceof Error ? error.message : String(error));
}

/** An error answer's body (every one has `detail`; validation errors add `fields`) as an ApiError. */
export function apiErrorFrom(status: number, data: unknown): ApiError {
  const body = (data && typeof data === 'object' ? data : {}) as { detail?: unknown; fields?: unknown; code?: unknown };
  const detail = typeof body.detail === 'string' && body.detail ? body.detail : `The request failed (HTTP ${status}).`;
  const fields = body.fields && typeof body.fields === 'object' ? (body.fields as Record<string, string[]>) : {};
  return new ApiError(status, detail, fields, typeof body.code === 'string' ? body.code : undefined);
}
