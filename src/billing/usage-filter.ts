import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { ValidationFailedError } from '../common/errors.js';
import type { HttpRequest } from '../common/request.js';
import { parseZonedTimestamp } from '../common/timestamps.js';
import { isUuid } from '../common/validation.js';
import { ApiErrors } from '../openapi/api-errors.js';

/** Which ledger lines to list: one key's, and within [from, to). Absent parts do not filter. */
export interface UsageFilter {
  keyId?: string;
  from?: Date;
  to?: Date;
}

const TIMESTAMP_FORMAT =
  'Datetime has wrong format. Use ISO 8601 with a time zone, e.g. 2026-11-01T00:00:00Z, or a date, e.g. 2026-11-01.';
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The parameter's one value; absent or empty is no filter, a repeated parameter is refused. */
function readParameter(request: HttpRequest, name: string): string | undefined {
  const raw = (request.query as Record<string, unknown>)[name];
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string') throw ValidationFailedError.field(name, 'Give this parameter once.');
  return raw;
}

/** A timestamp with a zone, or a date meaning its 00:00 UTC. */
function readInstant(request: HttpRequest, name: string): Date | undefined {
  const raw = readParameter(request, name);
  if (raw === undefined) return undefined;
  const instant = parseZonedTimestamp(DATE_ONLY.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (!instant) throw ValidationFailedError.field(name, TIMESTAMP_FORMAT);
  return instant;
}

/** `?key_id=&from=&to=`, validated: a bad value is a 400 naming it, and so is `from` after `to`. */
export const UsageFilterQuery = createParamDecorator((_: unknown, context: ExecutionContext): UsageFilter => {
  const request = context.switchToHttp().getRequest<HttpRequest>();
  const keyId = readParameter(request, 'key_id');
  if (keyId !== undefined && !isUuid(keyId)) throw ValidationFailedError.field('key_id', 'Must be a valid UUID.');
  const from = readInstant(request, 'from');
  const to = readInstant(request, 'to');
  if (from && to && from > to) throw ValidationFailedError.field('from', 'Must not be after `to`.');
  return { keyId: keyId?.toLowerCase(), from, to };
});

/** The filters as `/openapi.json` describes them. */
export function ApiUsageFilter() {
  const instant = { type: 'string' as const, format: 'date-time', maxLength: 35 };
  return applyDecorators(
    ApiQuery({
      name: 'key_id',
      required: false,
      schema: { type: 'string', format: 'uuid' },
      description:
        "Only what this API key spent. A key of another organization (or none) matches nothing: the page is empty, never another organization's lines.",
      example: '3f1e7c2a-9b4d-4c1e-8f2a-5d6b7c8e9f01',
    }),
    ApiQuery({
      name: 'from',
      required: false,
      schema: instant,
      description:
        'Only lines at or after this instant: ISO 8601 with a zone (`2026-11-01T00:00:00Z`; encode `+` as `%2B`), or a date (`2026-11-01`, 00:00 UTC).',
      example: '2026-11-01T00:00:00Z',
    }),
    ApiQuery({
      name: 'to',
      required: false,
      schema: instant,
      description:
        'Only lines before this instant (exclusive), in the same formats as `from`: `from=2026-11-01&to=2026-12-01` is November. Must not be before `from`.',
      example: '2026-12-01T00:00:00Z',
    }),
    ApiErrors({
      400: {
        description:
          'A `key_id` that is not a UUID, a `from` or `to` that is not ISO 8601, `from` after `to`, a parameter given twice, or a bad `limit` or `offset`.',
        bodies: {
          keyIdNotUuid: ValidationFailedError.field('key_id', 'Must be a valid UUID.').body(),
          fromNotIso: ValidationFailedError.field('from', TIMESTAMP_FORMAT).body(),
          fromAfterTo: ValidationFailedError.field('from', 'Must not be after `to`.').body(),
        },
      },
    }),
  );
}
