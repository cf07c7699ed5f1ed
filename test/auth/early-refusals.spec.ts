import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { describeRoutes } from '../../src/auth/route-requirements.js';
import { Public } from '../../src/common/auth.decorators.js';
import { ThrottledError } from '../../src/common/errors.js';

// One route method inherited by two controllers is one function, so it can carry one Fastify route
// config: the early refusals would apply the public one's requirement to both.
class Shared {
  @Get()
  read(): string {
    return 'shared';
  }
}

@Controller('open')
@Public()
class OpenController extends Shared {}

@Controller('closed')
class ClosedController extends Shared {}

@Module({ controllers: [OpenController, ClosedController] })
class SharedRoutesModule {}

describe('describeRoutes', () => {
  it('refuses to start when controllers share a route method but not its requirement', async () => {
    const app = await NestFactory.create<NestFastifyApplication>(
      SharedRoutesModule,
      new FastifyAdapter(),
      // Nest's option "classes" are interfaces in all but name (the rule is off in src/ for that reason).
      // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
      { logger: false },
    );
    try {
      expect(() => describeRoutes(app)).toThrow(
        'ClosedController.read is shared with another controller that requires other credentials',
      );
    } finally {
      await app.close();
    }
  });
});

describe('ApiError', () => {
  it('carries no stack trace: an answer to a client, built by the thousand under a flood', () => {
    const error = new ThrottledError(3);
    expect(error.stack).toBe('Error: Request was throttled. Expected available in 3 seconds.');
    expect(error.headers).toEqual({ 'Retry-After': '3' });
  });
});
