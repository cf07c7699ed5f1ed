import { Global, Module } from '@nestjs/common';
import { InFlightRequests } from './in-flight.js';

@Global()
@Module({
  providers: [{ provide: InFlightRequests, useValue: new InFlightRequests() }],
  exports: [InFlightRequests],
})
export class LifecycleModule {}
