import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { CurrentPrincipal } from '../common/auth.decorators.js';
import { type PageRequest, Pagination, toPage } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { UuidPathPipe } from '../common/validation.js';
import { presentMessage, presentSession } from './chat.presenter.js';
import { ChatService } from './chat.service.js';
import { CreateSessionDto, PostMessageDto, UpdateSessionDto } from './dto/chat.dto.js';

@Controller('v1/chat/sessions')
export class ChatController {
  constructor(private readonly chat: ChatService) {}

  @Post()
  async create(@CurrentPrincipal() caller: Principal, @Body() body: CreateSessionDto) {
    return presentSession(await this.chat.create(caller, body.title, body.domain));
  }

  @Get()
  async list(@CurrentPrincipal() caller: Principal, @Pagination() page: PageRequest & { url: URL }) {
    const [sessions, count] = await this.chat.list(caller, page);
    return toPage(page, count, sessions.map(presentSession));
  }

  @Get(':sessionId')
  async get(@CurrentPrincipal() caller: Principal, @Param('sessionId', UuidPathPipe) sessionId: string) {
    const session = await this.chat.get(caller, sessionId);
    const messages = await this.chat.messages(session.id);
    return { ...presentSession(session), messages: messages.map(presentMessage) };
  }

  @Patch(':sessionId')
  async rename(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', UuidPathPipe) sessionId: string,
    @Body() body: UpdateSessionDto,
  ) {
    return presentSession(await this.chat.rename(caller, sessionId, body.title));
  }

  @Delete(':sessionId')
  @HttpCode(204)
  async remove(@CurrentPrincipal() caller: Principal, @Param('sessionId', UuidPathPipe) sessionId: string): Promise<void> {
    await this.chat.remove(caller, sessionId);
  }

  @Post(':sessionId/messages')
  async post(
    @CurrentPrincipal() caller: Principal,
    @Param('sessionId', UuidPathPipe) sessionId: string,
    @Body() body: PostMessageDto,
  ) {
    const { user, assistant } = await this.chat.post(caller, sessionId, body.content);
    return { user_message: presentMessage(user), assistant_message: presentMessage(assistant) };
  }
}
