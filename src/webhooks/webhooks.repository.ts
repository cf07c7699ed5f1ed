import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { PageRequest } from '../common/pagination.js';

export interface EndpointRow {
  id: string;
  organization_id: string;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface DeliveryRow {
  id: string;
  event_id: string;
  type: string;
  status: 'pending' | 'sending' | 'delivered' | 'failed';
  attempts: number;
  response_status: number | null;
  response_body: string | null;
  last_error: string | null;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

export type EndpointChanges = Partial<Pick<EndpointRow, 'url' | 'description' | 'events' | 'enabled'>>;

const ENDPOINT_COLUMNS =
  'id, organization_id, url, description, events, enabled, disabled_reason, created_at, updated_at';
const DELIVERY_COLUMNS = `id, event_id, type, status, attempts, response_status, response_body, last_error,
  last_attempt_at, CASE WHEN status IN ('pending', 'sending') THEN next_attempt_at END AS next_attempt_at, created_at`;

/** Endpoints and their deliveries, as the API sees them (the delivery queue is `DeliveryQueue`'s). */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly dataSource: DataSource) {}

  async ownerOf(organizationId: string): Promise<string | null | undefined> {
    const rows: { owner_id: string | null }[] = await this.dataSource.query(
      'SELECT owner_id FROM organizations WHERE id = $1',
      [organizationId],
    );
    return rows[0]?.owner_id;
  }

  /**
   * Inserts an endpoint unless the organization already has `max`: the organization's row is locked
   * first, so concurrent creations count one after the other. Null when the limit is reached.
   */
  insert(
    organizationId: string,
    endpoint: { url: string; description: string; events: string[]; secretEncrypted: string },
    max: number,
  ): Promise<EndpointRow | null> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE', [organizationId]);
      const [{ count }]: { count: number }[] = await manager.query(
        'SELECT count(*)::int AS count FROM webhook_endpoints WHERE organization_id = $1',
        [organizationId],
      );
      if (count >= max) return null;
      const rows: EndpointRow[] = await manager.query(
        `INSERT INTO webhook_endpoints (organization_id, url, description, events, secret_encrypted)
         VALUES ($1, $2, $3, $4::text[], $5) RETURNING ${ENDPOINT_COLUMNS}`,
        [organizationId, endpoint.url, endpoint.description, endpoint.events, endpoint.secretEncrypted],
      );
      return rows[0];
    });
  }

  list(organizationId: string): Promise<EndpointRow[]> {
    return this.dataSource.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE organization_id = $1 ORDER BY created_at DESC, id`,
      [organizationId],
    );
  }

  async find(organizationId: string, id: string): Promise<EndpointRow | undefined> {
    const rows: EndpointRow[] = await this.dataSource.query(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE organization_id = $1 AND id = $2`,
      [organizationId, id],
    );
    return rows[0];
  }

  /** Re-enabling clears the failure streak; disabling fails what was still pending for it. */
  async update(organizationId: string, id: string, changes: EndpointChanges): Promise<EndpointRow | undefined> {
    return this.dataSource.transaction(async (manager) => {
      const rows: EndpointRow[] = await manager.query(
        `UPDATE webhook_endpoints SET
           url = coalesce($3, url),
           description = coalesce($4, description),
           events = coalesce($5::text[], events),
           enabled = coalesce($6, enabled),
           disabled_reason = CASE WHEN coalesce($6, enabled) THEN NULL
                                  WHEN $6 = false THEN 'Disabled by a user.' ELSE disabled_reason END,
           failing_since = CASE WHEN $6 = true AND NOT enabled THEN NULL ELSE failing_since END,
           updated_at = clock_timestamp()
         WHERE organization_id = $1 AND id = $2 RETURNING ${ENDPOINT_COLUMNS}`,
        [
          organizationId,
          id,
          changes.url ?? null,
          changes.description ?? null,
          changes.events ?? null,
          changes.enabled ?? null,
        ],
      );
      // TypeORM answers an UPDATE … RETURNING with [rows, affected].
      const updated = (rows as unknown as [EndpointRow[], number])[0].at(0);
      if (updated && changes.enabled === false) await failPending(manager, id, 'The endpoint is disabled.');
      return updated;
    });
  }

  async remove(organizationId: string, id: string): Promise<boolean> {
    const [, affected]: [unknown[], number] = await this.dataSource.query(
      'DELETE FROM webhook_endpoints WHERE organization_id = $1 AND id = $2',
      [organizationId, id],
    );
    return affected > 0;
  }

  /** The new secret signs from now on; the current one keeps signing alongside until `graceSeconds` pass. */
  async rotateSecret(organizationId: string, id: string, sealed: string, graceSeconds: number): Promise<boolean> {
    const [, affected]: [unknown[], number] = await this.dataSource.query(
      `UPDATE webhook_endpoints SET previous_secret_encrypted = secret_encrypted, secret_encrypted = $3,
              previous_secret_expires_at = clock_timestamp() + $4 * interval '1 second', updated_at = clock_timestamp()
        WHERE organization_id = $1 AND id = $2`,
      [organizationId, id, sealed, graceSeconds],
    );
    return affected > 0;
  }

  /** A `ping` event for this endpoint alone, due now; its delivery's id. */
  async recordPing(organizationId: string, endpointId: string, data: object): Promise<string> {
    const rows: { id: string }[] = await this.dataSource.query(
      `WITH event AS (
         INSERT INTO webhook_events (organization_id, type, payload)
         VALUES ($1, 'ping', jsonb_build_object(
           'type', 'ping',
           'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
           'data', $3::jsonb))
         RETURNING id
       )
       INSERT INTO webhook_deliveries (event_id, endpoint_id, type, next_attempt_at)
       SELECT event.id, $2, 'ping', clock_timestamp() FROM event RETURNING id`,
      [organizationId, endpointId, JSON.stringify(data)],
    );
    return rows[0].id;
  }

  async deliveries(endpointId: string, page: PageRequest): Promise<{ rows: DeliveryRow[]; count: number }> {
    const rows: DeliveryRow[] = await this.dataSource.query(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE endpoint_id = $1
        ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
      [endpointId, page.limit, page.offset],
    );
    const [{ count }]: { count: number }[] = await this.dataSource.query(
      'SELECT count(*)::int AS count FROM webhook_deliveries WHERE endpoint_id = $1',
      [endpointId],
    );
    return { rows, count };
  }

  /**
   * Due again now (one more attempt; the schedule goes on from its count). One being sent right now is
   * left to its worker. False: no such delivery.
   */
  async retry(endpointId: string, deliveryId: string): Promise<boolean> {
    const [, affected]: [unknown[], number] = await this.dataSource.query(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = clock_timestamp()
        WHERE endpoint_id = $1 AND id = $2 AND status <> 'sending'`,
      [endpointId, deliveryId],
    );
    if (affected > 0) return true;
    const rows: unknown[] = await this.dataSource.query(
      'SELECT 1 FROM webhook_deliveries WHERE endpoint_id = $1 AND id = $2',
      [endpointId, deliveryId],
    );
    return rows.length > 0;
  }
}

/** Deliveries still waiting for an endpoint that will no longer be called. */
export async function failPending(
  runner: { query: (sql: string, parameters?: unknown[]) => Promise<unknown> },
  endpointId: string,
  reason: string,
): Promise<void> {
  await runner.query(
    `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, last_error = coalesce(last_error, $2)
      WHERE endpoint_id = $1 AND status IN ('pending', 'sending')`,
    [endpointId, reason],
  );
}
