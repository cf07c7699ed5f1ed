import {
  applyDecorators,
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { HttpRequest } from '../common/http.js';
import { type AddressRule, AddressLimits } from './address-limits.js';
import { clientAddress } from '../common/client-address.js';

const ADDRESS_RULE = 'rate-limit:address-rule';

@Injectable()
export class AddressLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: AddressLimits,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = addressRuleOf(this.reflector, context.getHandler());
    if (rule) await this.limits.take(rule, clientAddress(context.switchToHttp().getRequest<HttpRequest>()));
    return true;
  }
}

/** The route's `@LimitPerAddress` rule, if it has one. */
export const addressRuleOf = (reflector: Reflector, handler: object): AddressRule | undefined =>
  reflector.get<AddressRule | undefined>(ADDRESS_RULE, handler as () => unknown);

/** Counts each request of the route against the client address's budget for `rule` (429 past it). */
export const LimitPerAddress = (rule: AddressRule) =>
  applyDecorators(SetMetadata(ADDRESS_RULE, rule), UseGuards(AddressLimitGuard));
