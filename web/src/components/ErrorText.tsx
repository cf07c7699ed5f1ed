import type { ApiError } from '../api/http';

/**
 * An API error, shown right where the failed action is, without the API's field prefix. With `field`:
 * only the message about that field, shown under its input. With `besideFields`: nothing when every
 * field the error names is among those shown beside their inputs (so no message appears twice).
 */
export function ErrorText({
  error,
  id,
  field,
  besideFields = [],
}: {
  error: ApiError | null | undefined;
  id?: string;
  field?: string;
  besideFields?: string[];
}) {
  if (!error) return null;
  let text: string | undefined = error.text;
  if (field !== undefined) text = error.fieldMessage(field);
  else {
    const named = Object.keys(error.fields);
    if (named.length > 0 && named.every((name) => besideFields.includes(name))) text = undefined;
  }
  if (text === undefined) return null;
  return (
    <p class="error" id={id} role="alert">
      {text}
    </p>
  );
}

/** The ids an input's aria-describedby needs for its hint and its error (when the error is about it). */
export function describedBy(error: ApiError | null | undefined, field: string, errorId: string, hintId?: string) {
  return [hintId, error?.hasField(field) ? errorId : undefined].filter(Boolean).join(' ') || undefined;
}
