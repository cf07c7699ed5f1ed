/**
 * A whole example of every request body, by its schema's name: what `/docs` fills in for "Try it out".
 * Each works against a fresh install, in this order: sign up and sign in as Ada, then create a key, a
 * document, a query… (no example names a public domain: a fresh install has none). Examples built
 * from the fields' own examples would mix fields (a `domain` next to a `filter` that fits another
 * corpus); these are written as one request each. test/ops/ops-openapi-examples sends them all.
 */
const ADA = { email: 'ada@example.com', password: 'a long password' };
const RUNBOOK = {
  title: 'Runbook',
  content: 'Restart the ingest worker when the queue backs up. Page the on-call engineer if it backs up again.',
  metadata: { team: 'ops', year: 2026 },
};
/** Where a token goes: the one `POST /auth/jwt/create/` answered. */
const A_REFRESH_TOKEN = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.<the refresh token from POST /auth/jwt/create/>';
/** Ids and tokens that only the steps before can give (test/ops/ops-openapi-examples fills them in). */
/** One of your organizations (`GET /auth/users/me/` lists them). */
export const AN_ORGANIZATION_ID = '5f0c2a7e-8d41-4b6a-9c3e-2a1b7d9e4f60';
/** A member's `user_id` (`GET /v1/organizations/current/members/`). */
export const A_MEMBER_ID = '9b3e6d21-4c7a-4f08-8e5d-1a2c3b4d5e6f';
export const AN_INVITATION_TOKEN = 'inv_<the token from POST /v1/organizations/current/invitations/>';

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  RegisterDto: ADA,
  CredentialsDto: ADA,
  RefreshDto: { refresh: A_REFRESH_TOKEN },
  VerifyDto: { token: A_REFRESH_TOKEN },
  LogoutDto: { refresh: A_REFRESH_TOKEN, all: false },
  CreateApiKeyDto: { name: 'ci', scopes: ['query', 'documents:read', 'documents:write'], rate_limit_per_minute: 600 },
  UpdateApiKeyDto: { name: 'ci (nightly)', expires_at: '2030-01-01T00:00:00Z', monthly_credit_limit: 500 },
  RotateApiKeyDto: { grace_period_seconds: 3600 },
  UpdateOrganizationDto: { name: 'Ada’s team', allowed_domains: null },
  SwitchOrganizationDto: { organization_id: AN_ORGANIZATION_ID },
  CreateInvitationDto: { email: 'grace@example.com', role: 'member' },
  AcceptInvitationDto: { token: AN_INVITATION_TOKEN },
  ChangeMemberRoleDto: { role: 'admin' },
  TransferOwnershipDto: { user_id: A_MEMBER_ID },
  SetMonthlyCreditsDto: { monthly_credits: 5000 },
  CreateDocumentDto: RUNBOOK,
  CreatePrivateDocumentDto: { ...RUNBOOK, collection_id: 'default' },
  PrivateDocumentUploadForm: {
    file: '(the file: text, Markdown, HTML or PDF)',
    title: 'Runbook',
    metadata: '{"team": "ops"}',
    collection_id: 'default',
  },
  CreateCollectionDto: { name: 'Support tickets', description: 'Tickets of 2026', metadata: { team: 'support' } },
  UpdateCollectionDto: { description: 'Tickets of 2026 and 2027' },
  DocumentUploadForm: {
    file: '(the file: text, Markdown, HTML or PDF)',
    title: 'Runbook',
    metadata: '{"team": "ops"}',
  },
  CreateDocumentBatchDto: {
    documents: [
      RUNBOOK,
      { title: 'On-call', content: 'The on-call engineer answers pages within 15 minutes.', metadata: { team: 'ops' } },
    ],
  },
  CreateRegionDto: { name: 'Europe', slug: 'europe' },
  UpdateRegionDto: { name: 'Europe (EU)' },
  CreateDomainDto: { name: 'Medicine', slug: 'medicine', description: 'Clinical guidelines', region: 'europe' },
  UpdateDomainDto: { description: 'Clinical guidelines, 2026 edition', is_active: true },
  QueryDto: { query: 'What do I do when the queue backs up?', top_k: 3, filter: { team: 'ops' } },
  SearchDto: { query: 'queue backs up', top_k: 5, collection_ids: ['default'] },
  CreateSessionDto: { title: 'Queue incidents' },
  UpdateSessionDto: { title: 'Queue incidents (resolved)' },
  PostMessageDto: { content: 'What do I do when the queue backs up?' },
  CreateWebhookDto: {
    url: 'https://partner.example.com/hooks/kqs',
    events: ['document.indexed', 'usage.threshold'],
    description: 'Production receiver',
  },
  UpdateWebhookDto: { events: ['document.indexed', 'document.deleted', 'api_key.expiring'] },
  CreateVectorStoreDto: { name: 'Partner handbook', metadata: { customer: 'acme' } },
  UpdateVectorStoreDto: { name: 'Partner handbook (2026)' },
  FileUploadForm: { file: '(the file: text, Markdown, HTML or PDF)', purpose: 'assistants' },
  AttachFileDto: { file_id: '<the id POST /v1/files answered>', attributes: { customer: 'acme', year: 2026 } },
  SearchVectorStoreDto: {
    query: 'When does the ingest worker restart?',
    filters: { type: 'eq', key: 'customer', value: 'acme' },
    max_num_results: 5,
    ranking_options: { score_threshold: 0.5 },
  },
  ChatCompletionDto: {
    model: 'private',
    collection_ids: ['default'],
    messages: [{ role: 'user', content: 'What do I do when the queue backs up?' }],
  },
};
