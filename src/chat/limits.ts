/** A session's GET carries its newest messages only; GET …/messages/ pages through all of them. */
export const SESSION_MESSAGES_MAX = 100;
