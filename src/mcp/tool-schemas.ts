import { z } from 'zod';
import { MAX_QUERY_CHARACTERS, MAX_TOP_K } from '../query/dto/query.dto.js';
import { FILTER_FIELDS_MAX, metadataFilterProblem } from '../retrieval/metadata-filter.js';
import { unstorableText } from '../common/validation.js';

/*
 * The tools' arguments and results, stated once in zod: the SDK validates the arguments with them (a bad
 * one is a tool error naming it: "… at top_k") and publishes them as each tool's inputSchema and
 * outputSchema. Inputs are strict: an argument this server does not know (`collection_ids` before
 * collections exist here) is refused by name rather than silently ignored.
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
  .describe("A public domain's slug (see list_knowledge_bases). Absent or null: the organization's private documents.");

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

export const LIST_OUTPUT = z.object({
  knowledge_bases: z.array(
    z.object({
      domain: z
        .string()
        .nullable()
        .describe('What to pass as `domain` to search and ask (null: the private documents).'),
      kind: z.enum(['private', 'public']),
      name: z.string(),
      description: z.string(),
    }),
  ),
});
