import { Body, Controller, Inject, Logger, Post, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { creditHeaders } from '../billing/credit-headers.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ValidationFailedError } from '../common/errors.js';
import type { HttpReply } from '../common/http.js';
import type { Principal } from '../common/principal.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { QueryDto } from './dto/query.dto.js';
import { QueryResponse } from './dto/query.response.js';
import { type PreparedAnswer, QueryService } from './query.service.js';
import { presentSource } from './source.presenter.js';
import { FILTER_MALFORMED } from './dto/metadata-filter.field.js';
import { CREDIT_HEADERS } from '../openapi/response-headers.js';
import { STREAM_MAX } from '../openapi/limits.js';

const STREAM_FAILURE = 'The answer could not be completed. It is transient: retry with exponential back-off.';

const STREAM_DESCRIPTION = `With \`"stream": true\`: Server-Sent Events. \`sources\` (\`{sources}\`) first, then \`delta\` events
(\`{text}\`, pieces of the answer in order), then \`done\` (the JSON response's body). If the answer fails midway, an
\`error\` event (\`{detail}\`) ends the stream instead of \`done\`, and the credits are given back.`;

const EXAMPLE_SOURCE = {
  document_id: '0d8f6a52-6a0e-4f7a-9a43-1f2b3c4d5e6f',
  chunk_id: '5b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
  title: 'Rotating API keys',
  snippet: 'Rotate a key with **POST** …/rotate/ …',
  score: 7.1234,
  metadata: {},
};
const STREAM_EXAMPLE = [
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
]
  .map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('');

@ApiTags('query')
@Authenticated()
@Controller('v1/query')
export class QueryController {
  private readonly logger = new Logger(QueryController.name);

  constructor(
    private readonly queries: QueryService,
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
    402: 'The monthly credit quota is exhausted.',
    403: { description: "The domain is outside the organization's `allowed_domains`.", examples: ['domainNotAllowed'] },
    404: 'No active public domain has this slug.',
  })
  async query(@CurrentPrincipal() caller: Principal, @Body() body: QueryDto, @Res() reply: HttpReply): Promise<void> {
    const prepared = await this.queries.prepare(caller, {
      text: body.query,
      domain: body.domain,
      topK: body.top_k ?? 5,
      filter: body.filter,
      operation: 'query',
    });
    reply.headers(creditHeaders(prepared.reservation));
    if (body.stream) return this.stream(prepared, reply);
    const answer = await this.queries.complete(prepared);
    await reply.status(200).send({ answer, ...this.summary(prepared) });
  }

  private async stream(prepared: PreparedAnswer, reply: HttpReply): Promise<void> {
    // The stream is written to the socket directly; the headers set so far (request id, rate limits,
    // credits, CORS, helmet's) go with it.
    reply.hijack();
    const response = reply.raw;
    response.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    const send = (event: string, data: unknown) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    send('sources', { sources: prepared.sources.map(presentSource) });
    try {
      const answer = await this.queries.complete(prepared, (text) => send('delta', { text }));
      send('done', { answer, ...this.summary(prepared) });
    } catch (error) {
      // Headers are gone: the failure travels as an event (the credits were refunded).
      this.logger.error(`streamed answer failed: ${(error as Error).stack ?? String(error)}`);
      send('error', { detail: STREAM_FAILURE });
    }
    response.end();
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
