import type { INestApplication } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import { AUTH_REQUIREMENT, type AuthRequirement } from '../common/auth.decorators.js';
import { BODY_BY_MEDIA_TYPE, type BodyByMediaType } from './api-body.js';

export interface HandlerInfo {
  requirement: AuthRequirement;
  /** The classes of the handler's parameters (DTOs among them). */
  parameterTypes: unknown[];
  /** A body described per media type (`@ApiJsonOrMultipartBody`). */
  bodyByMediaType?: BodyByMediaType;
}

/**
 * An operation's id is its handler's name (`createApiKey`, `query`), so generated clients get good
 * method names; handler names are therefore unique across controllers (`handlerInfo` checks).
 */
export const operationIdOf = (_controller: string, method: string): string => method;

/**
 * What every controller method requires (public, JWT only, admin only, or any credential), keyed by
 * its operation id. Read from the same metadata the auth guard reads, so the document cannot
 * disagree with the guard.
 */
export function handlerInfo(app: INestApplication): Map<string, HandlerInfo> {
  const handlers = new Map<string, HandlerInfo>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
      if (!controller?.prototype) continue;
      const classRequirement = Reflect.getMetadata(AUTH_REQUIREMENT, controller) as AuthRequirement | undefined;
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        if (name === 'constructor') continue;
        const method = controller.prototype[name];
        if (typeof method !== 'function' || Reflect.getMetadata(PATH_METADATA, method) === undefined) continue; // not a route
        const requirement = (Reflect.getMetadata(AUTH_REQUIREMENT, method) as AuthRequirement | undefined) ?? classRequirement ?? {};
        const parameterTypes = (Reflect.getMetadata('design:paramtypes', controller.prototype, name) as unknown[] | undefined) ?? [];
        const bodyByMediaType = Reflect.getMetadata(BODY_BY_MEDIA_TYPE, method) as BodyByMediaType | undefined;
        const operationId = operationIdOf(controller.name, name);
        if (handlers.has(operationId)) throw new Error(`Two handlers would share the operation id ${operationId}: rename one (${controller.name}.${name})`);
        handlers.set(operationId, { requirement, parameterTypes, bodyByMediaType });
      }
    }
  }
  return handlers;
}
