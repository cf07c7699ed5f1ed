import { Inject, Injectable, Logger } from '@nestjs/common';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { type CallToolResult, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { creditHeaders } from '../billing/credit-headers.js';
import { CollectionsService } from '../collections/collections.service.js';
import type { Reservation } from '../billing/quota.service.js';
import { ApiError, MissingScopeError, ServiceUnavailableError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import type { ApiKeyScope } from '../common/scopes.js';
import { serviceVersion } from '../common/version.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { INTERNAL_ERROR_DETAIL } from '../http/exception.filter.js';
import { DATABASE_UNAVAILABLE_DETAIL, isDatabaseUnavailable } from '../lifecycle/database-faults.js';
import { KnowledgeBaseService } from '../query/knowledge-base.service.js';
import { QueryService } from '../query/query.service.js';
import { SearchService } from '../query/search.service.js';
import type { MetadataFilter } from '../retrieval/metadata-filter.js';
import { ReadableDocuments } from './readable-documents.js';
import { presentResult, urlOf } from './result.presenter.js';
import {
  ASK_INPUT,
  ASK_OUTPUT,
  FETCH_INPUT,
  FETCH_OUTPUT,
  LIST_INPUT,
  LIST_OUTPUT,
  SEARCH_INPUT,
  SEARCH_OUTPUT,
} from './tool-schemas.js';

/** What one MCP request's tools act for: the caller, and the HTTP answer that carries the credit headers. */
export interface ToolContext {
  caller: Principal;
  /** Credit headers of a metered call, for the HTTP response. */
  onSpend(headers: Record<string, string>): void;
  /** A tool failed transiently (500, 503): the answer must not be replayed for an Idempotency-Key. */
  onTransientFailure?: () => void;
  signal?: AbortSignal;
}

/**
 * The JSON Schema validator every server would otherwise build for itself (a new Ajv per request cost more
 * CPU than the search it answered). A server uses it only to check elicitation answers, which these tools
 * never ask for; one shared instance is safe.
 */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

type ToolName = 'search' | 'ask' | 'fetch' | 'list_knowledge_bases';

/** The scope each tool needs of an API key (null: any credential), as the REST route it mirrors. */
const TOOL_SCOPES: Record<ToolName, ApiKeyScope | null> = {
  search: 'query',
  ask: 'query',
  fetch: 'documents:read',
  list_knowledge_bases: null,
};

/** A scoped API key needs the scope; JWTs and keys without a list have every scope. */
const allows = (caller: Principal, scope: ApiKeyScope | null) =>
  scope === null || !caller.scopes || caller.scopes.includes(scope);

const READ_ONLY = { readOnlyHint: true, openWorldHint: false };

/** Each tool's title, description, schemas and hints, as registered and listed. */
function toolConfigs(config: AppConfig) {
  return {
    search: {
      title: 'Search the knowledge base',
      description:
        "Passages matching a query, best first, from the organization's collections (collection_ids) or a public domain (domain). Each result's id can be given to fetch for the whole document.",
      inputSchema: SEARCH_INPUT,
      outputSchema: SEARCH_OUTPUT,
      annotations: READ_ONLY,
    },
    ask: {
      title: 'Ask the knowledge base',
      description: `An answer to a question, grounded in the knowledge base, with the passages it cites. Costs ${config.QUERY_CREDIT_COST} credit(s), like POST /v1/query/.`,
      inputSchema: ASK_INPUT,
      outputSchema: ASK_OUTPUT,
      annotations: READ_ONLY,
    },
    fetch: {
      title: 'Read a whole document',
      description: "The whole text of the document a search result (its id) comes from, with the document's metadata.",
      inputSchema: FETCH_INPUT,
      outputSchema: FETCH_OUTPUT,
      annotations: READ_ONLY,
    },
    list_knowledge_bases: {
      title: 'List the knowledge bases',
      description:
        "What search and ask can be asked about: the organization's collections the caller may reach (their ids go in collection_ids) and the public domains it may ask (their slugs go in domain).",
      inputSchema: LIST_INPUT,
      outputSchema: LIST_OUTPUT,
      annotations: READ_ONLY,
    },
  };
}

/** A result as MCP wants it: JSON text for any client, and the same object as structuredContent. */
function structured(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

/**
 * The knowledge base as MCP tools, over the same services as the REST routes: the same checks in the same
 * order, the same metering and ledger, the same messages. A server is built per request (the transport
 * is stateless) for its caller, listing only the tools its scopes allow: search and ask need `query`,
 * fetch needs `documents:read`, list_knowledge_bases any credential.
 */
@Injectable()
export class KnowledgeTools {
  private readonly logger = new Logger('MCP');

  private readonly tools;
  /** tools/list's entries, converted from the zod schemas once (as the SDK converts them on every list). */
  private readonly listed: Tool[];

  constructor(
    private readonly searches: SearchService,
    private readonly queries: QueryService,
    private readonly knowledgeBases: KnowledgeBaseService,
    private readonly collections: CollectionsService,
    private readonly documents: ReadableDocuments,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.tools = toolConfigs(config);
    this.listed = Object.entries(this.tools).map(([name, tool]) => ({
      name,
      title: tool.title,
      description: tool.description,
      inputSchema: z.toJSONSchema(tool.inputSchema, { target: 'draft-7', io: 'input' }) as Tool['inputSchema'],
      outputSchema: z.toJSONSchema(tool.outputSchema, { target: 'draft-7', io: 'output' }) as Tool['outputSchema'],
      annotations: tool.annotations,
    }));
  }

  serverFor(context: ToolContext): McpServer {
    const server = new McpServer(
      { name: 'knowledge-query-service', version: serviceVersion() },
      {
        instructions:
          "Search, read and ask questions of a knowledge base: the organization's collections and the public domains (list_knowledge_bases names them).",
        jsonSchemaValidator: SCHEMA_VALIDATOR,
      },
    );
    const { caller } = context;
    const tools = this.tools;
    server.registerTool('search', tools.search, (args) =>
      this.run(context, 'search', () => this.search(context, args)),
    );
    server.registerTool('ask', tools.ask, (args) => this.run(context, 'ask', () => this.ask(context, args)));
    server.registerTool('fetch', tools.fetch, (args) => this.run(context, 'fetch', () => this.fetch(caller, args.id)));
    server.registerTool('list_knowledge_bases', tools.list_knowledge_bases, () =>
      this.run(context, 'list_knowledge_bases', () => this.list(caller)),
    );
    // Every tool is registered, so a call outside the caller's scopes gets REST's 403 words rather than
    // "Tool not found"; only the allowed ones are listed (the SDK would list all that are registered).
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: this.listed.filter((tool) => allows(caller, TOOL_SCOPES[tool.name as ToolName])),
    }));
    return server;
  }

  private async search(
    context: ToolContext,
    args: {
      query: string;
      collection_ids?: string[] | null;
      domain?: string | null;
      top_k?: number;
      filter?: Record<string, unknown> | null;
    },
  ) {
    const outcome = await this.searches.search(context.caller, {
      text: args.query,
      domain: args.domain,
      collectionIds: args.collection_ids,
      topK: args.top_k ?? 5,
      filter: args.filter as MetadataFilter | null | undefined,
      signal: context.signal,
    });
    if (outcome.reservation) context.onSpend(creditHeaders(outcome.reservation));
    return { results: outcome.sources.map(presentResult) };
  }

  private async ask(
    context: ToolContext,
    args: {
      question: string;
      collection_ids?: string[] | null;
      domain?: string | null;
      filter?: Record<string, unknown> | null;
    },
  ) {
    const prepared = await this.queries.prepare(context.caller, {
      text: args.question,
      domain: args.domain,
      collectionIds: args.collection_ids,
      topK: 5,
      filter: args.filter as MetadataFilter | null | undefined,
      operation: 'query',
      signal: context.signal,
    });
    const reservation: Reservation = prepared.reservation;
    context.onSpend(creditHeaders(reservation));
    const answer = await this.queries.complete(prepared);
    return {
      answer,
      sources: prepared.sources.map(presentResult),
      domain: prepared.domain,
      credits_used: this.config.QUERY_CREDIT_COST,
      credits_remaining: reservation.creditsRemaining,
    };
  }

  private async fetch(caller: Principal, id: string) {
    const document = await this.documents.read(caller, id);
    return {
      id: document.id,
      title: document.title,
      text: document.content,
      url: urlOf(document.metadata),
      metadata: document.metadata,
    };
  }

  /** What GET /v1/models offers too: the collections the caller may reach, and the public domains it may ask. */
  private async list(caller: Principal) {
    const [collections, { domains }] = await Promise.all([
      this.collections.reachableList(caller),
      this.knowledgeBases.askable(caller),
    ]);
    return {
      knowledge_bases: [
        ...collections.map((collection) => ({
          kind: 'collection' as const,
          id: collection.id,
          name: collection.name,
          description: collection.description,
        })),
        ...domains.map((domain) => ({
          kind: 'public' as const,
          domain: domain.slug,
          name: domain.name,
          description: domain.description,
        })),
      ],
    };
  }

  /**
   * A refusal is a tool error (isError), not a transport failure: its text is the REST route's error
   * body with its status, e.g. {"status": 402, "detail": "Credit quota exhausted. …", …}. An unexpected
   * failure is logged and answered with the generic 500's words, never its message.
   */
  private async run(
    { caller, signal, onTransientFailure }: ToolContext,
    tool: ToolName,
    work: () => Promise<Record<string, unknown>>,
  ): Promise<CallToolResult> {
    const scope = TOOL_SCOPES[tool];
    if (!allows(caller, scope)) {
      const refused = new MissingScopeError(scope ?? '');
      return toolError({ status: refused.status, ...refused.body() });
    }
    try {
      return structured(await work());
    } catch (error) {
      let refusal: ApiError | null = error instanceof ApiError ? error : null;
      if (!refusal && isDatabaseUnavailable(error)) refusal = new ServiceUnavailableError(DATABASE_UNAVAILABLE_DETAIL);
      if (!refusal || refusal.status >= 500) onTransientFailure?.();
      if (refusal) return toolError({ status: refusal.status, ...refusal.body() });
      if (signal?.aborted) this.logger.log('client gone mid-answer: model call aborted (nothing charged)');
      else this.logger.error(`tool failed: ${(error as Error).stack ?? String(error)}`);
      return toolError({ status: 500, detail: INTERNAL_ERROR_DETAIL });
    }
  }
}

function toolError(body: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true };
}
