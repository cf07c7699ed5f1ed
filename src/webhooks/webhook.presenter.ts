import { toIsoMicros } from '../common/timestamps.js';
import type { WebhookDeliveryResponse, WebhookResponse } from './dto/webhook.response.js';
import type { DeliveryRow, EndpointRow } from './webhooks.repository.js';

export function presentWebhook(endpoint: EndpointRow): WebhookResponse {
  return {
    id: endpoint.id,
    url: endpoint.url,
    description: endpoint.description,
    events: endpoint.events,
    enabled: endpoint.enabled,
    disabled_reason: endpoint.disabled_reason,
    created_at: toIsoMicros(endpoint.created_at),
    updated_at: toIsoMicros(endpoint.updated_at),
  };
}

export function presentDelivery(delivery: DeliveryRow): WebhookDeliveryResponse {
  return {
    id: delivery.id,
    event_id: delivery.event_id,
    type: delivery.type,
    status: delivery.status,
    attempts: delivery.attempts,
    response_status: delivery.response_status,
    response_body: delivery.response_body,
    last_error: delivery.last_error,
    next_attempt_at: delivery.next_attempt_at ? toIsoMicros(delivery.next_attempt_at) : null,
    created_at: toIsoMicros(delivery.created_at),
  };
}
