import { api, publicApi } from './client';
import type {
  ApiKey,
  ChatMessage,
  ChatSession,
  ChatSessionWithMessages,
  DailyUsage,
  DocumentRecord,
  Domain,
  Organization,
  Page,
  Subscription,
  User,
} from './types';

const id = (value: string) => encodeURIComponent(value);
const page = (limit: number, offset: number) => `?limit=${limit}&offset=${offset}`;

/** A list the API may answer bare or paginated. */
function items<T>(body: T[] | Page<T>): T[] {
  return Array.isArray(body) ? body : body.results;
}

export const accounts = {
  register: (email: string, password: string) => publicApi<{ id: string; email: string }>('POST', '/auth/users/', { email, password }),
  me: () => api<User>('GET', '/auth/users/me/'),
};

export const keys = {
  list: () => api<ApiKey[]>('GET', '/v1/billings/api-keys/'),
  create: (name: string) => api<ApiKey>('POST', '/v1/billings/api-keys/', { name }),
  setExpiry: (keyId: string, expiresAt: string | null) =>
    api<ApiKey>('PATCH', `/v1/billings/api-keys/${id(keyId)}/update/`, { expires_at: expiresAt }),
  rotate: (keyId: string) => api<ApiKey>('POST', `/v1/billings/api-keys/${id(keyId)}/rotate/`),
  revoke: (keyId: string) => api<ApiKey>('POST', `/v1/billings/api-keys/${id(keyId)}/revoke/`),
};

export const billing = {
  subscription: () => api<Subscription>('GET', '/v1/billings/subscription/'),
  daily: async () => items(await api<DailyUsage[] | Page<DailyUsage>>('GET', '/v1/billings/usage/daily/')),
};

export const organizations = {
  current: () => api<Organization>('GET', '/v1/organizations/current/'),
  update: (change: { name?: string; allowed_domains?: string[] | null }) =>
    api<Organization>('PATCH', '/v1/organizations/current/', change),
};

export const domains = {
  list: async () => items(await api<Domain[] | Page<Domain>>('GET', '/v1/domains/')),
};

export const documents = {
  list: (limit: number, offset: number) => api<Page<DocumentRecord>>('GET', `/v1/documents/${page(limit, offset)}`),
  upload: (file: File, title: string) => {
    const form = new FormData();
    form.append('file', file);
    if (title.trim()) form.append('title', title.trim());
    return api<DocumentRecord>('POST', '/v1/documents/', form);
  },
  remove: (documentId: string) => api<void>('DELETE', `/v1/documents/${id(documentId)}/`),
};

export const chat = {
  list: (limit: number, offset: number) => api<Page<ChatSession>>('GET', `/v1/chat/sessions/${page(limit, offset)}`),
  create: (title: string, domain: string | null) =>
    api<ChatSession>('POST', '/v1/chat/sessions/', domain ? { title, domain } : { title }),
  get: (sessionId: string) => api<ChatSessionWithMessages>('GET', `/v1/chat/sessions/${id(sessionId)}/`),
  send: (sessionId: string, content: string) =>
    api<{ user_message: ChatMessage; assistant_message: ChatMessage }>('POST', `/v1/chat/sessions/${id(sessionId)}/messages/`, { content }),
};
