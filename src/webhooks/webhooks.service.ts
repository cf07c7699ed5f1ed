import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module.js';
import type { AppConfig } from '../config/env.schema.js';
import { BadRequestError, NotFoundError, PermissionDeniedError, ValidationFailedError } from '../common/errors.js';
import type { PageRequest } from '../common/pagination.js';
import type { Principal } from '../common/principal.js';
import { WEBHOOK_SECRET_BOX } from './delivery-worker.js';
import { generateWebhookSecret, type SecretBox } from './webhook-secrets.js';
import { refusedUrlReason } from './webhook-url.js';
import { type DeliveryRow, type EndpointChanges, type EndpointRow, WebhooksRepository } from './webhooks.repository.js';

/** The old secret keeps signing this long after a rotation. */
export const ROTATION_OVERLAP_SECONDS = 24 * 3600;

export const tooManyEndpoints = (max: number) => `An organization may have at most ${max} webhook endpoints.`;

/**
 * Webhook endpoints of the caller's organization. Managing them is for the organization's admins and
 * owner; until teams exist an organization's one user is its owner, so it is that user's JWT or keys.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly endpoints: WebhooksRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WEBHOOK_SECRET_BOX) private readonly secrets: SecretBox,
  ) {}

  async create(
    caller: Principal,
    input: { url: string; events: string[]; description?: string },
  ): Promise<{ endpoint: EndpointRow; secret: string }> {
    await this.mayManage(caller);
    await this.checkUrl(input.url);
    const secret = generateWebhookSecret();
    const endpoint = await this.endpoints.insert(
      caller.organizationId,
      {
        url: input.url,
        events: input.events,
        description: input.description ?? '',
        secretEncrypted: this.secrets.seal(secret),
      },
      this.config.WEBHOOK_MAX_ENDPOINTS,
    );
    if (!endpoint) throw new BadRequestError(tooManyEndpoints(this.config.WEBHOOK_MAX_ENDPOINTS));
    return { endpoint, secret };
  }

  async list(caller: Principal): Promise<EndpointRow[]> {
    await this.mayManage(caller);
    return this.endpoints.list(caller.organizationId);
  }

  async get(caller: Principal, id: string): Promise<EndpointRow> {
    await this.mayManage(caller);
    const endpoint = await this.endpoints.find(caller.organizationId, id);
    if (!endpoint) throw new NotFoundError();
    return endpoint;
  }

  async update(caller: Principal, id: string, changes: EndpointChanges): Promise<EndpointRow> {
    await this.get(caller, id);
    if (changes.url !== undefined) await this.checkUrl(changes.url);
    const updated = await this.endpoints.update(caller.organizationId, id, changes);
    if (!updated) throw new NotFoundError();
    return updated;
  }

  async remove(caller: Principal, id: string): Promise<void> {
    await this.mayManage(caller);
    if (!(await this.endpoints.remove(caller.organizationId, id))) throw new NotFoundError();
  }

  async rotateSecret(caller: Principal, id: string): Promise<string> {
    await this.mayManage(caller);
    const secret = generateWebhookSecret();
    const rotated = await this.endpoints.rotateSecret(
      caller.organizationId,
      id,
      this.secrets.seal(secret),
      ROTATION_OVERLAP_SECONDS,
    );
    if (!rotated) throw new NotFoundError();
    return secret;
  }

  /** Queues a `ping` to this endpoint alone. */
  async test(caller: Principal, id: string): Promise<string> {
    const endpoint = await this.get(caller, id);
    return this.endpoints.recordPing(caller.organizationId, endpoint.id, { webhook_id: endpoint.id });
  }

  async deliveries(caller: Principal, id: string, page: PageRequest): Promise<{ rows: DeliveryRow[]; count: number }> {
    const endpoint = await this.get(caller, id);
    return this.endpoints.deliveries(endpoint.id, page);
  }

  async retry(caller: Principal, id: string, deliveryId: string): Promise<void> {
    const endpoint = await this.get(caller, id);
    if (!(await this.endpoints.retry(endpoint.id, deliveryId))) throw new NotFoundError();
  }

  private async checkUrl(url: string): Promise<void> {
    const reason = await refusedUrlReason(url, { allowPrivate: this.config.WEBHOOK_ALLOW_PRIVATE_URLS });
    if (reason) throw ValidationFailedError.field('url', reason);
  }

  /**
   * The organization must still exist. Who may manage its endpoints (admins and the owner) is the
   * route's declared role, checked by the permissions guard before this runs; never a key limited to collections.
   */
  private async mayManage(caller: Principal): Promise<void> {
    // An API key limited to collections may not: the events name every collection's documents.
    if (caller.collectionIds) throw new PermissionDeniedError();
    const owner = await this.endpoints.ownerOf(caller.organizationId);
    if (owner === undefined) throw new NotFoundError();
  }
}
