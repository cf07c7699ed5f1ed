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
}

export const NETWORK_DETAIL = 'Could not reach the service. Check your connection and try again.';

/** Whatever was thrown, as an ApiError whose detail can be shown. */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, error instanceof Error ? error.message : String(error));
}

export interface SendOptions {
  token?: string;
  json?: unknown;
  form?: FormData;
}

export async function send(method: string, path: string, options: SendOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  let body: BodyInit | undefined;
  if (options.form) {
    body = options.form;
  } else if (options.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  try {
    return await fetch(path, { method, headers, body, credentials: 'omit', cache: 'no-store' });
  } catch {
    throw new ApiError(0, NETWORK_DETAIL);
  }
}

/** The parsed body of a success, or the API's error as an ApiError. */
export async function readBody<T>(response: Response): Promise<T> {
  const text = response.status === 204 ? '' : await response.text();
  let data: unknown;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (response.ok) return data as T;
  const body = (data && typeof data === 'object' ? data : {}) as { detail?: unknown; fields?: unknown; code?: unknown };
  const detail = typeof body.detail === 'string' && body.detail ? body.detail : `The request failed (HTTP ${response.status}).`;
  const fields = body.fields && typeof body.fields === 'object' ? (body.fields as Record<string, string[]>) : {};
  throw new ApiError(response.status, detail, fields, typeof body.code === 'string' ? body.code : undefined);
}
