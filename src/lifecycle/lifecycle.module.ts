import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller.js';
import { InFlightRequests } from './in-flight.js';
import { ShutdownState } from './shutdown-state.js';

/** The process's life: liveness and readiness probes, requests in flight, and draining on SIGTERM. */
@Global()
@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [ShutdownState, { provide: InFlightRequests, useValue: new InFlightRequests() }],
  exports: [ShutdownState, InFlightRequests],
})
export class LifecycleModule {}
