import { OmitType } from '@nestjs/swagger';
import { QueryDto } from './query.dto.js';

/** `POST /v1/search/`: a question's fields, without the answer's (`stream`). */
export class SearchDto extends OmitType(QueryDto, ['stream'] as const) {}
