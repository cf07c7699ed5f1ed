import { z } from 'zod';
import { MAX_QUERY_CHARACTERS, MAX_TOP_K } from '../query/dto/query.dto.js';
import { FILTER_FIELDS_MAX, metadataFilterProblem } from '../retrieval/metadata-filter.js';
import { unstorableText } from '../common/validation.js';
import { COLLECTION_IDS_MAX } from '../collections/collections.service.js';
import { COLLECTION_ID_MAX } from '../collections/dto/collection-ids.field.js';

/*
 * The tools' arguments and results, stated once in zod: the SDK validates the arguments with them (a bad
 * one is a tool error naming it: "… at top_k") and publishes them as each tool's inputSchema and
 * outputSchema. Inputs are strict: an argument this server does not know is refused by name rather than
 * silently ignored.
 */

const notBlank = (text: string) => text.trim().length > 0;

/** REST's words for text PostgreSQL cannot take (a NUL, a lone surrogate): a bad argument, not a 500. */
const storable = (text: string | null | undefined, context: z.RefinementCtx) => {
  const problem = typeof text === 'string' ? unstorableText(text) : null;
  if (problem) context.addIssue({ code: 'custom', message: problem });
};

const question = (description: string) =>
  z
    .string()
    .max(MAX_QUERY_CHARACTERS)
    .refine(notBlank, 'This field may not be blank.')
    .superRefine(storable)
    .describe(description);

const domain = z
  .string()
  .max(50)
  .superRefine(storable)
  .nullable()
  .optional()
  .describe(
    "A public domain's slug (see list_knowledge_bases). Absent or null: the organization's collections (collection_ids). Not with collection_ids.",
  );

/** REST's `collection_ids` (collectionIdsProblem's words): 1 to 20 ids, each a collection's id or `default`. */
const NOT_COLLECTION_IDS = 'Expected a list of collection ids.';
const collectionIds = z
  .array(z.string(NOT_COLLECTION_IDS).min(1, NOT_COLLECTION_IDS).max(COLLECTION_ID_MAX, NOT_COLLECTION_IDS), {
    error: NOT_COLLECTION_IDS,
  })
  .min(1, 'This list may not be empty.')
  .max(COLLECTION_IDS_MAX, `Ensure this field has no more than ${COLLECTION_IDS_MAX} elements.`)
  .nullable()
  .optional()
  .describe(
    `1 to ${COLLECTION_IDS_MAX} collection ids (see list_knowledge_bases; "default" stands for the default collection), ranked as one corpus. Absent or null: the default collection, or for an API key limited to collections, all of its own. Not with domain.`,
  );

/** The same rules as REST's `filter` (metadataFilterProblem), so the same filters pass and fail. */
const filter = z
  .record(z.string(), z.unknown())
  .nullable()
  .optional()
  .superRefine((value, context) => {
    const problem = metadataFilterProblem(value);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  })
  .describe(
    `Only documents whose metadata match contribute passages. Fields are ANDed (at most ${FILTER_FIELDS_MAX}); each maps a metadata key to a value (equality) or to operators: $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $exists. Example: {"year": {"$gte": 2024}, "team": {"$in": ["billing", "security"]}}.`,
  );

export const SEARCH_INPUT = z.strictObject({
  query: question('What to look for, in words.'),
  collection_ids: collectionIds,
  domain,
  top_k: z
    .number()
    .int()
    .min(1)
    .max(MAX_TOP_K)
    .optional()
    .describe('How many results come back, best first (default 5).'),
  filter,
});

export const FETCH_INPUT = z.strictObject({
  id: z.string().min(1).max(100).describe("A search result's id (or a document_id)."),
});

export const ASK_INPUT = z.strictObject({
  question: question('The question to answer from the knowledge base.'),
  collection_ids: collectionIds,
  domain,
  filter,
});

export const LIST_INPUT = z.strictObject({});

const RESULT = z.object({
  id: z.string().describe("The passage's id: give it to fetch for the whole document."),
  title: z.string(),
  url: z.string().nullable().describe("The document's `url` (or `source_url`) metadata when it is a web address."),
  text: z.string().describe("The passage's text."),
  score: z.number(),
  document_id: z.string(),
  start: z.number().int().nullable().describe("The passage's start offset in the document's text."),
  end: z.number().int().nullable(),
  page: z.number().int().nullable().describe('1-based page, for a passage of a PDF.'),
});

export type SearchResult = z.infer<typeof RESULT>;

export const SEARCH_OUTPUT = z.object({ results: z.array(RESULT) });

export const FETCH_OUTPUT = z.object({
  id: z.string(),
  title: z.string(),
  text: z.string().describe("The document's whole text."),
  url: z.string().nullable(),
  metadata: z.record(z.string(), z.union([z.string(), z.number()])),
});

export const ASK_OUTPUT = z.object({
  answer: z.string(),
  sources: z.array(RESULT),
  domain: z.string().nullable(),
  credits_used: z.number(),
  credits_remaining: z.number(),
});

const LISTED_COLLECTION = z.object({
  kind: z.literal('collection'),
  id: z.string().describe('What to pass in `collection_ids` to search and ask.'),
  name: z.string(),
  description: z.string().nullable(),
});

const LISTED_DOMAIN = z.object({
  kind: z.literal('public'),
  domain: z.string().describe('What to pass as `domain` to search and ask.'),
  name: z.string(),
  description: z.string(),
});

export const LIST_OUTPUT = z.object({
  knowledge_bases: z
    .array(z.discriminatedUnion('kind', [LISTED_COLLECTION, LISTED_DOMAIN]))
    .describe(
      "The organization's collections the caller may reach (oldest first, `default` leading), then the public domains it may ask.",
    ),
});
