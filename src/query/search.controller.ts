import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { creditHeaders } from '../billing/credit-headers.js';
import { Authenticated, CurrentPrincipal } from '../common/auth.decorators.js';
import { ValidationFailedError } from '../common/errors.js';
import { abortedWhenClientGoes } from '../common/event-stream.js';
import type { HttpReply } from '../common/request.js';
import type { Principal } from '../common/principal.js';
import { ApiErrors } from '../openapi/api-errors.js';
import { CREDIT_HEADERS } from '../openapi/response-headers.js';
import { FILTER_MALFORMED } from './dto/metadata-filter.field.js';
import { SearchDto } from './dto/search.dto.js';
import { SearchResponse } from './dto/search.response.js';
import { SearchService } from './search.service.js';
import { presentSearch } from './search.presenter.js';
import { ApiController } from '../openapi/api-controller.js';

@ApiController('query')
@Authenticated({ scope: 'query', role: 'viewer' })
@Controller('v1/search')
export class SearchController {
  constructor(private readonly searches: SearchService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: "Retrieve passages without an answer, from a public domain or your organization's private documents",
    description:
      'The passages a query would cite, best first, each a source object. Costs SEARCH_CREDIT_COST credits (default 0: free, unmetered); when above 0 it is metered like a query, and a failed request costs nothing. Checks in order: 401, 400, 404 (domain), 403 (allowed_domains), 402 (quota, when metered).',
  })
  @ApiOkResponse({
    type: SearchResponse,
    description: 'The passages found (possibly none). With SEARCH_CREDIT_COST above 0, the credit headers too.',
    headers: CREDIT_HEADERS,
  })
  @ApiErrors({
    400: {
      description: '`query` missing or blank, a malformed `filter`, or a field of the wrong type or out of range.',
      bodies: {
        queryRequired: ValidationFailedError.field('query', 'This field is required.').body(),
        filterMalformed: FILTER_MALFORMED.body(),
      },
    },
    402: 'Searches are metered (SEARCH_CREDIT_COST above 0) and the monthly credit quota is exhausted.',
    403: { description: "The domain is outside the organization's `allowed_domains`.", examples: ['domainNotAllowed'] },
    404: 'No active public domain has this slug.',
  })
  async search(
    @CurrentPrincipal() caller: Principal,
    @Body() body: SearchDto,
    @Res({ passthrough: true }) reply: HttpReply,
  ): Promise<SearchResponse> {
    const outcome = await this.searches.search(caller, {
      text: body.query,
      domain: body.domain,
      collectionIds: body.collection_ids,
      topK: body.top_k ?? 5,
      filter: body.filter,
      signal: abortedWhenClientGoes(reply),
    });
    if (outcome.reservation) reply.headers(creditHeaders(outcome.reservation));
    return presentSearch(outcome);
  }
}
