import { Body, Controller, Inject, Logger, Post, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, getSchemaPath } from '@nestjs/swagger';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { creditHeaders } from '../billing/credit-headers.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ValidationFailedError } from '../common/errors.js';
import { abortedWhenClientGoes, openEventStream } from '../common/event-stream.js';
import type { HttpReply } from '../common/request.js';
import { IdempotentStreams } from '../idempotency/idempotency.service.js';
import type { Principal } from '../common/principal.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { QueryDto } from './dto/query.dto.js';
import { EXAMPLE_SOURCE, QueryResponse } from './dto/query.response.js';
import { type PreparedAnswer, QueryService } from './query.service.js';
import { presentSource } from './source.presenter.js';
import { FILTER_MALFORMED } from './dto/metadata-filter.field.js';
import { CREDIT_HEADERS } from '../openapi/response-headers.js';
import { STREAM_MAX } from '../openapi/limits.js';
import { ApiController } from '../openapi/api-controller.js';

export const STREAM_FAILURE = 'The answer could not be completed. It is transient: retry with exponential back-off.';

const STREAM_DESCRIPTION = `With \`"stream": true\`: Server-Sent Events. \`sources\` (\`{sources}\`) first, then \`delta\` events
(\`{text}\`, pieces of the answer in order), then \`done\` (the JSON response's body). If the answer fails midway, an
\`error\` event (\`{detail}\`) ends the stream instead of \`done\`, and the credits are given back. A client that hangs up
after the \`sources\` event and before any \`delta\` is charged what a search costs (SEARCH_CREDIT_COST), the rest given back;
after a \`delta\`, the whole query.`;

const STREAM_EXAMPLE = (
  [
    ['sources', { sources: [EXAMPLE_SOURCE] }],
    ['delta', { text: 'Rotate the key with ' }],
    ['delta', { text: 'POST /v1/billings/api-keys/{key_id}/rotate/.' }],
    [
      'done',
      {
        answer: 'Rotate the key with POST /v1/billings/api-keys/{key_id}/rotate/.',
        sources: [EXAMPLE_SOURCE],
        domain: 'handbook',
        credits_used: 1,
        credits_remaining: 999,
      },
    ],
  ] satisfies [event: string, data: unknown][]
)
  .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');

@ApiController('query')
@Authenticated({ scope: 'query', role: 'viewer' })
@Controller('v1/query')
export class QueryController {
  private readonly logger = new Logger(QueryController.name);

  constructor(
    private readonly queries: QueryService,
    private readonly idempotency: IdempotentStreams,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** JSON by default; with `"stream": true`, Server-Sent Events: `sources`, `delta`s, then `done`. */
  @Post()
  @ApiOperation({
    summary: "Ask a question of a public domain or of your organization's private documents",
    description: `Without \`domain\`, searches the organization's private knowledge base. Costs QUERY_CREDIT_COST credits; a failed request costs nothing. Checks in order: 401, 400, 404 (domain), 403 (allowed_domains), 402 (quota).\n\n${STREAM_DESCRIPTION}`,
  })
  @ApiExtraModels(QueryResponse)
  @ApiOkResponse({
    description: 'The answer and its sources (JSON), or the same as an event stream when `stream` is true.',
    headers: CREDIT_HEADERS,
    content: {
      'application/json': { schema: { $ref: getSchemaPath(QueryResponse) } },
      'text/event-stream': {
        schema: { type: 'string', maxLength: STREAM_MAX, description: STREAM_DESCRIPTION },
        example: STREAM_EXAMPLE,
      },
    },
  })
  @ApiErrors({
    400: {
      description: '`query` missing or blank, a malformed `filter`, or a field of the wrong type or out of range.',
      bodies: {
        queryRequired: ValidationFailedError.field('query', 'This field is required.').body(),
        filterMalformed: FILTER_MALFORMED.body(),
      },
    },
    402: "The monthly credit quota, or the key's monthly credit limit, is exhausted.",
    403: {
      description:
        "The domain is outside the organization's `allowed_domains`; or the API key lacks the scope `query`.",
      examples: ['domainNotAllowed', 'missingScope'],
    },
    404: 'No active public domain has this slug.',
  })
  async query(@CurrentPrincipal() caller: Principal, @Body() body: QueryDto, @Res() reply: HttpReply): Promise<void> {
    const prepared = await this.queries.prepare(caller, {
      text: body.query,
      domain: body.domain,
      collectionIds: body.collection_ids,
      topK: body.top_k ?? 5,
      filter: body.filter,
      operation: 'query',
      signal: abortedWhenClientGoes(reply),
    });
    reply.headers(creditHeaders(prepared.reservation));
    if (body.stream) return this.stream(prepared, reply);
    const answer = await this.queries.complete(prepared);
    await reply.status(200).send({ answer, ...this.summary(prepared) });
  }

  private async stream(prepared: PreparedAnswer, reply: HttpReply): Promise<void> {
    const events = openEventStream(reply);
    events.send({ sources: prepared.sources.map(presentSource) }, 'sources');
    // Written to a connection still open: from here a hang-up still pays for the search.
    prepared.sourcesDelivered = !prepared.signal?.aborted;
    try {
      const answer = await this.queries.complete(prepared, (text) => events.send({ text }, 'delta'));
      const done = { answer, ...this.summary(prepared) };
      // With an Idempotency-Key, a retry is answered this final JSON, not a stream.
      await this.idempotency.settleStreamed(reply, done);
      events.send(done, 'done');
    } catch (error) {
      // Unfinished: a retry with the same Idempotency-Key runs again.
      await this.idempotency.settleStreamed(reply, null);
      if (prepared.signal?.aborted) {
        this.logger.log('client gone mid-answer: model call aborted (charged only if part was delivered)');
        return;
      }
      // Headers are gone: the failure travels as an event (the credits were refunded).
      this.logger.error(`streamed answer failed: ${(error as Error).stack ?? String(error)}`);
      events.send({ detail: STREAM_FAILURE }, 'error');
    }
    events.end();
  }

  private summary(prepared: PreparedAnswer) {
    return {
      sources: prepared.sources.map(presentSource),
      domain: prepared.domain,
      credits_used: this.config.QUERY_CREDIT_COST,
      credits_remaining: prepared.reservation.creditsRemaining,
    };
  }
}
