import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { creditHeaders } from '../billing/credit-headers.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { abortedWhenClientGoes } from '../common/event-stream.js';
import { ApiPagination } from '../openapi/page.response.js';
import { type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { HttpReply } from '../common/request.js';
import type { Principal } from '../common/principal.js';
import { UuidPathPipe } from '../common/validation.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { ApiUuidParam } from '../openapi/api-params.js';
import { presentMessage, presentSession } from './chat.presenter.js';
import { ChatService } from './chat.service.js';
import { SESSION_MESSAGES_MAX } from './limits.js';
import { CreateSessionDto, PostMessageDto, UpdateSessionDto } from './dto/chat.dto.js';
import {
  ChatExchangeResponse,
  ChatMessagePage,
  ChatSessionDetailResponse,
  ChatSessionPage,
  ChatSessionResponse,
} from './dto/chat.response.js';
import { CREDIT_HEADERS } from '../openapi/response-headers.js';
import { ApiController } from '../openapi/api-controller.js';

const SESSION_ID = () => ApiUuidParam('sessionId', 'The id of one of your sessions.');
const NO_SUCH_SESSION = "No such session, or another user's.";
const scopeOrDomainRefused = (scope: string) => ({
  description: `The domain is outside the organization's \`allowed_domains\`; or the API key lacks the scope \`${scope}\`.`,
  examples: ['domainNotAllowed', 'missingScope'] as const,
});

@ApiController('chat')
@Authenticated({ scope: 'chat', role: 'viewer' })
@Controller('v1/chat/sessions')
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @Post()
  @ApiOperation({ summary: 'Start a chat session over a public domain or your private documents' })
  @ApiCreatedResponse({ type: ChatSessionResponse })
  @ApiErrors({ 403: scopeOrDomainRefused('chat'), 404: 'No active public domain has this slug.' })
  async createChatSession(@CurrentPrincipal() caller: Principal, @Body() body: CreateSessionDto) {
    return presentSession(await this.chat.create(caller, body.title, body.domain));
  }

  @Get()
  @ApiOperation({ summary: 'List your chat sessions, most recently active first' })
  @ApiPagination()
  @ApiOkResponse({ type: ChatSessionPage })
  async listChatSessions(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }) {
    const [sessions, count] = await this.chat.list(caller, page);
    return toPage(page, count, sessions.map(presentSession));
  }

  @Get(':sessionId')
  @ApiOperation({
    summary: 'One of your sessions, with its latest messages in order',
    description: `\`messages\` holds the newest ${SESSION_MESSAGES_MAX}, oldest first; \`GET …/messages/\` pages through all of them.`,
  })
  @SESSION_ID()
  @ApiOkResponse({ type: ChatSessionDetailResponse })
  @ApiErrors({ 404: NO_SUCH_SESSION })
  async getChatSession(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', new UuidPathPipe('Session')) sessionId: string,
  ) {
    const session = await this.chat.get(caller, sessionId);
    const messages = await this.chat.latestMessages(session.id);
    return { ...presentSession(session), messages: messages.map(presentMessage) };
  }

  @Get(':sessionId/messages')
  @ApiOperation({ summary: "One of your sessions' messages, oldest first, a page at a time" })
  @SESSION_ID()
  @ApiPagination()
  @ApiOkResponse({ type: ChatMessagePage })
  @ApiErrors({ 404: NO_SUCH_SESSION })
  async listChatMessages(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', new UuidPathPipe('Session')) sessionId: string,
    @Pagination() page: PageRequest & { url: URL },
  ) {
    const session = await this.chat.get(caller, sessionId);
    const [messages, count] = await this.chat.messagePage(session.id, page);
    return toPage(page, count, messages.map(presentMessage));
  }

  @Patch(':sessionId')
  @ApiOperation({ summary: 'Rename one of your sessions' })
  @SESSION_ID()
  @ApiOkResponse({ type: ChatSessionResponse })
  @ApiErrors({ 404: NO_SUCH_SESSION })
  async renameChatSession(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', new UuidPathPipe('Session')) sessionId: string,
    @Body() body: UpdateSessionDto,
  ) {
    return presentSession(await this.chat.rename(caller, sessionId, body.title));
  }

  @Delete(':sessionId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete one of your sessions with its messages' })
  @SESSION_ID()
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: NO_SUCH_SESSION })
  async deleteChatSession(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', new UuidPathPipe('Session')) sessionId: string,
  ): Promise<void> {
    await this.chat.remove(caller, sessionId);
  }

  @Post(':sessionId/messages')
  @Authenticated({ scope: 'query', role: 'viewer' })
  @ApiOperation({
    summary: "Send a message: answered with the session's history in mind, costing credits like a query",
    description: 'Both messages are stored only once the answer exists; a failed request costs nothing.',
  })
  @SESSION_ID()
  @ApiCreatedResponse({ type: ChatExchangeResponse, headers: CREDIT_HEADERS })
  @ApiErrors({
    402: "The monthly credit quota, or the key's monthly credit limit, is exhausted.",
    403: scopeOrDomainRefused('query'),
    404: "No such session, or another user's; or the session's domain is no longer active.",
  })
  async postChatMessage(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', new UuidPathPipe('Session')) sessionId: string,
    @Body() body: PostMessageDto,
    @Res({ passthrough: true }) reply: HttpReply,
  ) {
    const { user, assistant, reservation } = await this.chat.post(
      caller,
      sessionId,
      body.content,
      body.filter,
      body.collection_ids,
      abortedWhenClientGoes(reply),
    );
    reply.headers(creditHeaders(reservation));
    return { user_message: presentMessage(user), assistant_message: presentMessage(assistant) };
  }
}
