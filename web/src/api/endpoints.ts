import { api } from './client';
import { publicClient, unwrap } from './public';
import type { components } from './schema';
import type { AssignableRole, KeySettings, OrganizationChange, WebhookChange, WebhookEventType } from './types';

const page = (limit: number, offset: number) => ({ query: { limit, offset } });

export const accounts = {
  register: (email: string, password: string) =>
    unwrap(publicClient.POST('/auth/users/', { body: { email, password } })),
  me: () => api((client) => client.GET('/auth/users/me/')),
};

export const keys = {
  list: () => api((client) => client.GET('/v1/billings/api-keys/')),
  create: (name: string, settings: KeySettings = {}) =>
    api((client) => client.POST('/v1/billings/api-keys/', { body: { ...settings, name } })),
  update: (keyId: string, change: KeySettings & { name?: string }) =>
    api((client) =>
      client.PATCH('/v1/billings/api-keys/{keyId}/update/', { params: { path: { keyId } }, body: change }),
    ),
  events: (limit: number, offset: number) =>
    api((client) => client.GET('/v1/billings/api-keys/events/', { params: page(limit, offset) })),
  setExpiry: (keyId: string, expiresAt: string | null) =>
    api((client) =>
      client.PATCH('/v1/billings/api-keys/{keyId}/update/', {
        params: { path: { keyId } },
        body: { expires_at: expiresAt },
      }),
    ),
  /** `graceSeconds`: how long the replaced key keeps working (0: it stops at once). */
  rotate: (keyId: string, graceSeconds = 0) =>
    api((client) =>
      client.POST('/v1/billings/api-keys/{keyId}/rotate/', {
        params: { path: { keyId } },
        body: { grace_period_seconds: graceSeconds },
      }),
    ),
  revoke: (keyId: string) =>
    api((client) => client.POST('/v1/billings/api-keys/{keyId}/revoke/', { params: { path: { keyId } } })),
};

export const billing = {
  subscription: () => api((client) => client.GET('/v1/billings/subscription/')),
  daily: () => api((client) => client.GET('/v1/billings/usage/daily/')),
  byKey: () => api((client) => client.GET('/v1/billings/usage/keys/')),
  byMember: () => api((client) => client.GET('/v1/billings/usage/members/')),
};

export const organizations = {
  current: () => api((client) => client.GET('/v1/organizations/current/')),
  update: (change: OrganizationChange) => api((client) => client.PATCH('/v1/organizations/current/', { body: change })),
};

export const domains = {
  list: () => api((client) => client.GET('/v1/domains/')),
};

export const collections = {
  /** The first `limit` collections, oldest first (`default` leads). */
  list: (limit = 100) => api((client) => client.GET('/v1/collections/', { params: page(limit, 0) })),
  create: (name: string) => api((client) => client.POST('/v1/collections/', { body: { name } })),
  rename: (id: string, name: string) =>
    api((client) => client.PATCH('/v1/collections/{id}/', { params: { path: { id } }, body: { name } })),
  remove: (id: string) => api((client) => client.DELETE('/v1/collections/{id}/', { params: { path: { id } } })),
};

export const documents = {
  /** One collection's documents (`default` when none is named). */
  list: (limit: number, offset: number, collectionId = 'default') =>
    api((client) =>
      client.GET('/v1/documents/', { params: { query: { limit, offset, collection_id: collectionId } } }),
    ),
  upload: (file: File, title: string, collectionId = 'default') => {
    const form = new FormData();
    form.append('file', file);
    if (title.trim()) form.append('title', title.trim());
    form.append('collection_id', collectionId);
    // The multipart form's fields, sent as FormData (its `file` is binary, which a JSON type cannot hold).
    const body = form as unknown as components['schemas']['DocumentUploadForm'];
    return api((client) => client.POST('/v1/documents/', { body }));
  },
  /** With its text; a public domain's document (admins only) when `domain` is given. */
  get: (documentId: string, domain: string | null) =>
    domain === null
      ? api((client) => client.GET('/v1/documents/{id}/', { params: { path: { id: documentId } } }))
      : api((client) =>
          client.GET('/v1/domains/{slug}/documents/{id}/', { params: { path: { slug: domain, id: documentId } } }),
        ),
  remove: (documentId: string) =>
    api((client) => client.DELETE('/v1/documents/{id}/', { params: { path: { id: documentId } } })),
};

export const chat = {
  list: (limit: number, offset: number) =>
    api((client) => client.GET('/v1/chat/sessions/', { params: page(limit, offset) })),
  create: (title: string, domain: string | null) =>
    api((client) => client.POST('/v1/chat/sessions/', { body: domain ? { title, domain } : { title } })),
  get: (sessionId: string) =>
    api((client) => client.GET('/v1/chat/sessions/{sessionId}/', { params: { path: { sessionId } } })),
  /** `collectionIds`: the collections a private session's message asks (null: the default). */
  send: (sessionId: string, content: string, collectionIds: string[] | null = null) =>
    api((client) =>
      client.POST('/v1/chat/sessions/{sessionId}/messages/', {
        params: { path: { sessionId } },
        body: collectionIds ? { content, collection_ids: collectionIds } : { content },
      }),
    ),
};

export const webhooks = {
  list: () => api((client) => client.GET('/v1/webhooks/')),
  create: (url: string, events: WebhookEventType[], description: string) =>
    api((client) => client.POST('/v1/webhooks/', { body: { url, events, description } })),
  update: (webhookId: string, change: WebhookChange) =>
    api((client) => client.PATCH('/v1/webhooks/{webhookId}/', { params: { path: { webhookId } }, body: change })),
  remove: (webhookId: string) =>
    api((client) => client.DELETE('/v1/webhooks/{webhookId}/', { params: { path: { webhookId } } })),
  rotateSecret: (webhookId: string) =>
    api((client) => client.POST('/v1/webhooks/{webhookId}/rotate-secret/', { params: { path: { webhookId } } })),
  /** Queues a `ping` to the endpoint; resolves with the delivery's id. */
  test: (webhookId: string) =>
    api((client) => client.POST('/v1/webhooks/{webhookId}/test/', { params: { path: { webhookId } } })),
  deliveries: (webhookId: string, limit: number, offset: number) =>
    api((client) =>
      client.GET('/v1/webhooks/{webhookId}/deliveries/', {
        params: { path: { webhookId }, query: { limit, offset } },
      }),
    ),
  retry: (webhookId: string, deliveryId: string) =>
    api((client) =>
      client.POST('/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry/', {
        params: { path: { webhookId, deliveryId } },
      }),
    ),
};

export const team = {
  members: (limit: number, offset: number) =>
    api((client) => client.GET('/v1/organizations/current/members/', { params: page(limit, offset) })),
  changeRole: (userId: string, role: AssignableRole) =>
    api((client) =>
      client.PATCH('/v1/organizations/current/members/{userId}/', { params: { path: { userId } }, body: { role } }),
    ),
  /** Removes a member; one's own user id is leaving. */
  remove: (userId: string) =>
    api((client) => client.DELETE('/v1/organizations/current/members/{userId}/', { params: { path: { userId } } })),
  transferOwnership: (userId: string) =>
    api((client) => client.POST('/v1/organizations/current/transfer-ownership/', { body: { user_id: userId } })),
  invite: (email: string, role: AssignableRole) =>
    api((client) => client.POST('/v1/organizations/current/invitations/', { body: { email, role } })),
  invitations: (limit: number, offset: number) =>
    api((client) => client.GET('/v1/organizations/current/invitations/', { params: page(limit, offset) })),
  revokeInvitation: (invitationId: string) =>
    api((client) =>
      client.DELETE('/v1/organizations/current/invitations/{invitationId}/', { params: { path: { invitationId } } }),
    ),
  accept: (token: string) => api((client) => client.POST('/v1/invitations/accept/', { body: { token } })),
};

/** Every key of the organization (admins and the owner). */
export const organizationKeys = {
  list: (limit: number, offset: number) =>
    api((client) => client.GET('/v1/organizations/current/api-keys/', { params: page(limit, offset) })),
  revoke: (keyId: string) =>
    api((client) => client.POST('/v1/organizations/current/api-keys/{keyId}/revoke/', { params: { path: { keyId } } })),
};

/** The organization's audit log: key and membership events (admins and the owner). */
export const organizationEvents = {
  list: (limit: number, offset: number) =>
    api((client) => client.GET('/v1/organizations/current/events/', { params: page(limit, offset) })),
};
