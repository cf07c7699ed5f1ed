/** The requests whose answer must not be stored for their `Idempotency-Key`, whatever their status. */
const notStored = new WeakSet<object>();

/**
 * This request's answer is not stored for its key (which is given back), so a retry runs again: for an
 * answer whose HTTP status is 200 but whose content is a transient failure, as an MCP tool's 500 or 503.
 */
export function doNotStoreAnswer(request: object): void {
  notStored.add(request);
}

export function isAnswerNotStored(request: object): boolean {
  return notStored.has(request);
}
