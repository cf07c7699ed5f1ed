import type { ApiError } from '../api/http';

/** An API error's `detail`, shown right where the failed action is. */
export function ErrorText({ error, id }: { error: ApiError | null | undefined; id?: string }) {
  if (!error) return null;
  return (
    <p class="error" id={id} role="alert">
      {error.detail}
    </p>
  );
}
