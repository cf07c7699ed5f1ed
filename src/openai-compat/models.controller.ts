import { Controller, Get, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { NotFoundError } from '../common/errors.js';
import type { Principal } from '../common/principal.js';
import { SLUG_SCHEMA } from '../domains/dto/slug.field.js';
import { ModelListResponse, ModelResponse } from './dto/chat-completion.response.js';
import { ModelsService } from './models.service.js';
import { ApiOpenAiErrors } from './openai-errors.js';
import { ApiController } from '../openapi/api-controller.js';

@ApiController('openai')
@Authenticated({ role: 'viewer' })
@ApiOpenAiErrors({})
@Controller('v1/models')
export class ModelsController {
  constructor(private readonly models: ModelsService) {}

  @Get()
  @ApiOperation({
    summary: 'The models this caller may ask, OpenAI-style',
    description:
      "`private` (the organization's documents), then each active public domain the organization's `allowed_domains` let it ask. Costs nothing. Errors here carry OpenAI's `error: {message, type, code, param}` beside `detail`.",
  })
  @ApiOkResponse({ type: ModelListResponse })
  async listModels(@CurrentPrincipal() caller: Principal) {
    return { object: 'list' as const, data: await this.models.list(caller) };
  }

  @Get(':model')
  @ApiOperation({ summary: 'One model this caller may ask, OpenAI-style', description: 'Costs nothing.' })
  @ApiParam({ name: 'model', schema: { ...SLUG_SCHEMA, example: 'private' } })
  @ApiOkResponse({ type: ModelResponse })
  @ApiOpenAiErrors({
    404: {
      description: 'No such model, or one the caller may not ask.',
      bodies: { unknownModel: NotFoundError.named('Model', 'medicine').body() },
    },
  })
  retrieveModel(@CurrentPrincipal() caller: Principal, @Param('model') model: string) {
    return this.models.get(caller, model);
  }
}
