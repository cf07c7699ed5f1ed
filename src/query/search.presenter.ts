import { SearchResponse } from './dto/search.response.js';
import type { SearchOutcome } from './search.service.js';
import { presentSource } from './source.presenter.js';

export function presentSearch(outcome: SearchOutcome): SearchResponse {
  const response = new SearchResponse();
  response.results = outcome.sources.map(presentSource);
  response.domain = outcome.domain;
  return response;
}
