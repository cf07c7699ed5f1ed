import { Body, Controller, Inject, Logger, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { CurrentPrincipal } from '../common/auth.decorators.js';
import type { Principal } from '../common/principal.js';
import { QueryDto } from './dto/query.dto.js';
import { type PreparedAnswer, QueryService } from './query.service.js';
import { presentSource } from './source.presenter.js';

const STREAM_FAILURE = 'The answer could not be completed. It is transient: retry with exponential back-off.';

@Controller('v1/query')
export class QueryController {
  private readonly logger = new Logger(QueryController.name);

  constructor(
    private readonly queries: QueryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** JSON by default; with `"stream": true`, Server-Sent Events: `sources`, `delta`s, then `done`. */
  @Post()
  async ask(@CurrentPrincipal() caller: Principal, @Body() body: QueryDto, @Res() response: Response): Promise<void> {
    const prepared = await this.queries.prepare(caller, {
      text: body.query,
      domain: body.domain,
      topK: body.top_k ?? 5,
      operation: 'query',
    });
    response.set({
      'X-Credits-Remaining': String(prepared.reservation.creditsRemaining),
      'X-Credits-Reset': prepared.reservation.resetsAt,
    });
    if (body.stream) return this.stream(prepared, response);
    const answer = await this.queries.complete(prepared);
    response.status(200).json({ answer, ...this.summary(prepared) });
  }

  private async stream(prepared: PreparedAnswer, response: Response): Promise<void> {
    response.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
    response.flushHeaders();
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
