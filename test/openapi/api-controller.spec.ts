import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiOperation, DECORATORS } from '@nestjs/swagger';
import { Authenticated } from '../../src/common/auth.decorators.js';
import { ApiController } from '../../src/openapi/api-controller.js';
import { ApiErrors } from '../../src/openapi/api-errors.js';

const shared = (name: string) => ({ $ref: `#/components/responses/${name}` });
const header = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** Declared in the order the house writes them, and in the other: the result must not depend on it. */
@ApiController('things')
@Controller('things')
@Authenticated({ scope: 'query', role: 'member' })
class ThingsController {
  @Post(':id')
  @ApiErrors({ 403: 'Not your thing.' })
  @ApiOperation({ summary: 'Make a thing', description: 'What it does.' })
  make(@Body() body: object) {
    return body;
  }

  @ApiOperation({ summary: 'List the things' })
  @ApiErrors({ 404: 'No such shelf.' })
  @Get()
  list() {
    return [];
  }
}

/** A route's handler, where its decorators keep their metadata. */
const route = (name: 'make' | 'list') =>
  Object.getOwnPropertyDescriptor(ThingsController.prototype, name)?.value as object;
const responsesOf = (handler: object) =>
  Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) as Record<string, unknown>;

describe('@ApiController: each route documented where it is declared', () => {
  it('adds the errors a POST with a body and a scope implies, under the ones the route declares', () => {
    const responses = responsesOf(route('make'));
    expect(Object.keys(responses).sort()).toEqual([
      '400',
      '401',
      '403',
      '409',
      '410',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(responses['403']).toMatchObject({ description: 'Not your thing.' });
    expect(responses['403']).toMatchObject({
      headers: expect.objectContaining({
        'RateLimit-Limit': header('RateLimit-Limit'),
        'Access-Control-Allow-Origin': header('Access-Control-Allow-Origin'),
        'Idempotent-Replayed': header('Idempotent-Replayed'),
      }),
    });
    expect([responses['400'], responses['401'], responses['409']]).toEqual([
      shared('BadRequest'),
      shared('Unauthorized'),
      shared('IdempotencyInProgress'),
    ]);
  });

  it('gives an authenticated POST the Idempotency-Key parameter, and a GET neither it nor a body error', () => {
    const parameters = (handler: object) =>
      ((Reflect.getMetadata(DECORATORS.API_PARAMETERS, handler) ?? []) as { name?: string }[]).map((p) => p.name);
    expect(parameters(route('make'))).toContain('Idempotency-Key');
    expect(parameters(route('list'))).not.toContain('Idempotency-Key');
    const list = responsesOf(route('list'));
    expect(Object.keys(list).sort()).toEqual(['401', '403', '404', '429', '500', '503']);
    expect(list['403']).toEqual(shared('MissingScope'));
    expect(list['404']).toMatchObject({ description: 'No such shelf.' });
  });

  it("puts the requirement's notes first in the description, whatever the decorators' order", () => {
    const descriptionOf = (handler: object) =>
      (Reflect.getMetadata(DECORATORS.API_OPERATION, handler) as { description?: string }).description ?? '';
    for (const handler of [route('make'), route('list')]) {
      const parts = descriptionOf(handler).split('\n\n');
      expect(parts[0]).toMatch(/^\*\*Scope `query`\*\*/);
      expect(parts[1]).toMatch(/^\*\*Role `member` or above\*\*/);
    }
    expect(descriptionOf(route('make')).endsWith('What it does.')).toBe(true);
  });
});
