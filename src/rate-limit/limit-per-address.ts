import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiExtension } from '@nestjs/swagger';
import type { HttpReply, HttpRequest } from '../common/request.js';
import { type AddressRule, AddressLimits } from './address-limits.js';
import { clientAddress } from '../common/client-address.js';

const ADDRESS_RULE = 'rate-limit:address-rule';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A controller route's `@LimitPerAddress` rule, resolved at start-up (auth/route-requirements.ts). */
    addressRule?: AddressRule;
  }
}

@Injectable()
export class AddressLimitGuard implements CanActivate {
  constructor(private readonly limits: AddressLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<HttpRequest>();
    // Resolved from the decorator once, at start-up (auth/route-requirements.ts).
    const rule = request.routeOptions.config.addressRule;
    if (!rule) return true;
    const headers = await this.limits.take(rule, clientAddress(request));
    http.getResponse<HttpReply>().headers(headers);
    return true;
  }
}

/** The route's `@LimitPerAddress` rule, if it has one. */
export const addressRuleOf = (reflector: Reflector, handler: object): AddressRule | undefined =>
  reflector.get<AddressRule | undefined>(ADDRESS_RULE, handler as () => unknown);

/** The OpenAPI extension naming a route's rule; the document gives its answers the address bucket's headers. */
export const ADDRESS_RULE_EXTENSION = 'x-rate-limit-per-address';

/**
 * Counts each request of the route against the client address's budget for `rule` (429 past it); its
 * answers carry that budget's RateLimit-* headers.
 */
export const LimitPerAddress = (rule: AddressRule) =>
  applyDecorators(
    SetMetadata(ADDRESS_RULE, rule),
    UseGuards(AddressLimitGuard),
    ApiExtension(ADDRESS_RULE_EXTENSION, rule),
  );
