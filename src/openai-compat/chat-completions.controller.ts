import { Body, Controller, HttpCode, Logger, Post, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, getSchemaPath } from '@nestjs/swagger';
import { creditHeaders } from '../billing/credit-headers.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { DomainNotAllowedError, NotFoundError, QuotaExhaustedError, ValidationFailedError } from '../common/errors.js';
import { abortedWhenClientGoes, openEventStream } from '../common/event-stream.js';
import type { HttpReply } from '../common/request.js';
import { IdempotentStreams } from '../idempotency/idempotency.service.js';
import type { Principal } from '../common/principal.js';
import { STREAM_MAX } from '../openapi/limits.js';
import { CREDIT_HEADERS } from '../openapi/response-headers.js';
import type { PreparedAnswer } from '../query/query.service.js';
import { STREAM_FAILURE } from '../query/query.controller.js';
import {
  type CompletionHeader,
  newCompletionHeader,
  presentChunk,
  presentCompletion,
  presentLastChunk,
} from './chat-completion.presenter.js';
import {
  ChatCompletionsService,
  type Conversation,
  conversationOf,
  estimateUsage,
} from './chat-completions.service.js';
import { ChatCompletionDto, MESSAGES_MAX } from './dto/chat-completion.dto.js';
import { EXAMPLE_SOURCE } from '../query/dto/query.response.js';
import { ChatCompletionResponse } from './dto/chat-completion.response.js';
import { ApiOpenAiErrors, withOpenAiError } from './openai-errors.js';
import { ApiController } from '../openapi/api-controller.js';

const STREAM_DESCRIPTION = `With \`"stream": true\`: OpenAI's Server-Sent Events, each \`data: {chat.completion.chunk}\`: the first
carries \`delta.role\`, the next ones pieces of \`delta.content\` in order, the last \`finish_reason: "stop"\`, \`usage\` and
\`sources\`; then \`data: [DONE]\`. If the answer fails midway, a \`data: {detail, error}\` event ends the stream instead
(no \`[DONE]\`), and the credits are given back. With an \`Idempotency-Key\`, a retry after a completed stream is answered
the \`chat.completion\` JSON (200, \`Idempotent-Replayed: true\`), neither run nor charged again.`;

const EXAMPLE_HEADER = { id: 'chatcmpl-0d8f6a526a0e4f7a9a431f2b3c4d5e6f', created: 1795000000, model: 'private' };
const EXAMPLE_ANSWER = 'To rotate an API key, call the rotate endpoint with a JWT access token. [1]';
const EXAMPLE_USAGE = { prompt_tokens: 7, completion_tokens: 19, total_tokens: 26 };
const STREAM_EXAMPLE = [
  { ...presentChunk(EXAMPLE_HEADER, { role: 'assistant', content: '' }) },
  { ...presentChunk(EXAMPLE_HEADER, { content: EXAMPLE_ANSWER }) },
  { ...presentLastChunk(EXAMPLE_HEADER, [], EXAMPLE_USAGE), sources: [EXAMPLE_SOURCE] },
]
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .concat('data: [DONE]\n\n')
  .join('');

@ApiController('openai')
@Authenticated({ scope: 'query', role: 'viewer' })
@Controller('v1/chat/completions')
export class ChatCompletionsController {
  private readonly logger = new Logger(ChatCompletionsController.name);

  constructor(
    private readonly completions: ChatCompletionsService,
    private readonly idempotency: IdempotentStreams,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Answer a conversation, OpenAI-style (chat completions)',
    description: `For OpenAI client libraries (\`baseURL\` = \`{base_url}/v1\`, the API key or JWT as the key). \`model\` is \`private\`, a collection's id (\`default\` for the default collection) or a public domain's slug (see \`GET /v1/models\`); \`collection_ids\` (with \`private\` only) asks those collections. The last user message is answered from the knowledge base like a chat message, with the earlier messages as history; it costs QUERY_CREDIT_COST credits, like a query, and a failed request costs nothing. Checks in order: 401, 400, 404 (model), 403 (allowed_domains), 402 (quota). Errors carry this service's \`detail\` and OpenAI's \`error: {message, type, code, param}\`. \`max_tokens\` and \`temperature\` are accepted and ignored, as are OpenAI's other fields (\`n\`, \`top_p\`, \`stop\`, \`user\`, …); one choice comes back.\n\n${STREAM_DESCRIPTION}`,
  })
  @ApiExtraModels(ChatCompletionResponse)
  @ApiOkResponse({
    description: 'The completion with its sources (JSON), or `chat.completion.chunk` events when `stream` is true.',
    headers: CREDIT_HEADERS,
    content: {
      'application/json': {
        schema: { $ref: getSchemaPath(ChatCompletionResponse) },
        example: {
          ...presentCompletion(EXAMPLE_HEADER, EXAMPLE_ANSWER, [], EXAMPLE_USAGE),
          sources: [EXAMPLE_SOURCE],
        },
      },
      'text/event-stream': {
        schema: { type: 'string', maxLength: STREAM_MAX, description: STREAM_DESCRIPTION },
        example: STREAM_EXAMPLE,
      },
    },
  })
  @ApiOpenAiErrors({
    400: {
      description: `\`model\` or \`messages\` missing, no user message, a message without \`content\`, more than ${MESSAGES_MAX} messages, or a field of the wrong type.`,
      bodies: {
        noMessages: ValidationFailedError.field('messages', 'This list may not be empty.').body(),
        noContent: ValidationFailedError.field('messages.0.content', 'This field is required.').body(),
      },
    },
    402: {
      description: 'The monthly credit quota is exhausted.',
      bodies: {
        quota: new QuotaExhaustedError({
          creditsTotal: 1000,
          creditsUsed: 1000,
          resetsAt: '2026-12-01T00:00:00Z',
        }).body(),
      },
    },
    403: {
      description: "The model is a domain outside the organization's `allowed_domains`.",
      bodies: { domainNotAllowed: new DomainNotAllowedError().body() },
    },
    404: { description: 'No such model.', bodies: { unknownModel: NotFoundError.named('Model', 'medicine').body() } },
  })
  async createChatCompletion(
    @CurrentPrincipal() caller: Principal,
    @Body() body: ChatCompletionDto,
    @Res() reply: HttpReply,
  ): Promise<void> {
    const conversation = conversationOf(body.messages);
    const prepared = await this.completions.prepare(
      caller,
      { model: body.model, collectionIds: body.collection_ids },
      conversation,
      abortedWhenClientGoes(reply),
    );
    reply.headers(creditHeaders(prepared.reservation));
    const header = newCompletionHeader(body.model);
    if (body.stream) return this.stream(header, conversation, prepared, reply);
    const answer = await this.completions.complete(prepared);
    await reply
      .status(200)
      .send(presentCompletion(header, answer, prepared.sources, estimateUsage(conversation, answer)));
  }

  private async stream(
    header: CompletionHeader,
    conversation: Conversation,
    prepared: PreparedAnswer,
    reply: HttpReply,
  ): Promise<void> {
    const events = openEventStream(reply);
    events.send(presentChunk(header, { role: 'assistant', content: '' }));
    try {
      const answer = await this.completions.complete(prepared, (content) =>
        events.send(presentChunk(header, { content })),
      );
      const usage = estimateUsage(conversation, answer);
      // With an Idempotency-Key, a retry is answered the completion as JSON (what `stream: false` gives).
      await this.idempotency.settleStreamed(reply, presentCompletion(header, answer, prepared.sources, usage));
      events.send(presentLastChunk(header, prepared.sources, usage));
      events.send('[DONE]');
    } catch (error) {
      // Unfinished: a retry with the same Idempotency-Key runs again.
      await this.idempotency.settleStreamed(reply, null);
      if (prepared.signal?.aborted) {
        this.logger.log('client disconnected before the completion was streamed in full: the model stopped');
        return;
      }
      // Headers are gone: the failure travels as an event OpenAI clients raise (the credits were refunded).
      this.logger.error(`streamed completion failed: ${(error as Error).stack ?? String(error)}`);
      events.send(withOpenAiError(500, { detail: STREAM_FAILURE }));
    }
    events.end();
  }
}
