import { BODY_TEXT_MAX, integerSchema } from '../common/validation.js';

/**
 * Limits of what the service answers, for the response schemas. Each is a bound the service keeps,
 * derived from where the value comes from; request fields take theirs from their validation rules.
 */

/** Credit figures: PostgreSQL `integer` columns, never negative. */
export const CREDITS = integerSchema(0, 2 ** 31 - 1);

/** Row counts (`count` of a page): whatever the database holds, within JSON's exact integers. */
export const COUNT = integerSchema(0, Number.MAX_SAFE_INTEGER);

/** Three sentences of passages with their citations (extractive), or a model's reply. */
export const ANSWER_MAX = BODY_TEXT_MAX;

/**
 * A streamed answer: its deltas (the answer) and the final JSON (the answer again, and up to 100
 * sources of at most a snippet, a title and 50 metadata values each).
 */
export const STREAM_MAX = 16_777_216;

/** The longest text a document holds: a text upload of MAX_UPLOAD_BYTES' default (a PDF's text stops at 5,000,000). */
export const DOCUMENT_TEXT_MAX = 10_485_760;

/** Longest string of a `format`, so a formatted string needs no limit of its own. */
export const FORMAT_MAX_LENGTH: Record<string, number> = {
  uuid: 36,
  // 2026-11-21T09:14:03.482913+00:00
  'date-time': 32,
  date: 10,
  email: 254,
  // A page link: path and query (`/v1/documents/?limit=20&offset=20`).
  'uri-reference': 2048,
};
