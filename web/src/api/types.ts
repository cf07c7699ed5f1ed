import type { components } from './schema';

/**
 * The dashboard's names for the API's records: the generated schemas of /openapi.json (schema.d.ts),
 * not copies, so they follow the API.
 */
type Schemas = components['schemas'];

export type User = Schemas['CurrentUserResponse'];
/** A key as listed; the create and rotate answers add the full `key` (and `rotated_from`) once. */
export type ApiKey = Schemas['ApiKeyResponse'] &
  Partial<Pick<Schemas['RotatedApiKeyResponse'], 'key' | 'rotated_from'>>;
/** What a partner may set on a key: scopes, limits and metadata (create and update). */
export type KeySettings = Pick<
  Schemas['CreateApiKeyDto'],
  'scopes' | 'rate_limit_per_minute' | 'monthly_credit_limit' | 'metadata' | 'collection_ids'
>;
export type KeyScope = NonNullable<KeySettings['scopes']>[number];
export type KeyEvent = Schemas['ApiKeyEventResponse'];
export type KeyEventPage = Schemas['ApiKeyEventPage'];
export type Subscription = Schemas['SubscriptionResponse'];
export type DailyUsage = Schemas['DailyUsageResponse'];
export type KeyUsage = Schemas['KeyUsageResponse'];
export type Organization = Schemas['OrganizationResponse'];
export type Domain = Schemas['DomainResponse'];
export type Source = Schemas['SourceResponse'];
export type ChatMessage = Schemas['ChatMessageResponse'];
export type ChatSession = Schemas['ChatSessionResponse'];
export type ChatSessionWithMessages = Schemas['ChatSessionDetailResponse'];
export type DocumentRecord = Schemas['DocumentResponse'];
export type DocumentPage = Schemas['DocumentPage'];
export type Collection = Schemas['CollectionResponse'];
export type CollectionPage = Schemas['CollectionPage'];
export type OrganizationChange = Schemas['UpdateOrganizationDto'];
export type Webhook = Schemas['WebhookResponse'];
/** The create answer: the endpoint with its signing secret, shown this once. */
export type CreatedWebhook = Schemas['CreatedWebhookResponse'];
export type WebhookChange = Schemas['UpdateWebhookDto'];
export type WebhookEventType = Webhook['events'][number];
export type WebhookDelivery = Schemas['WebhookDeliveryResponse'];
export type WebhookDeliveryPage = Schemas['WebhookDeliveryPage'];
export type TeamRole = User['role'];
export type UserOrganization = User['organizations'][number];
export type Member = Schemas['MemberResponse'];
export type MemberPage = Schemas['MemberPage'];
export type AssignableRole = Schemas['ChangeMemberRoleDto']['role'];
export type Invitation = Schemas['InvitationResponse'];
export type CreatedInvitation = Schemas['CreatedInvitationResponse'];
export type InvitationPage = Schemas['InvitationPage'];
/** A key as an admin sees it in the organization's list: with the member who made it. */
export type OrganizationKey = Schemas['OrganizationKeyResponse'];
export type OrganizationEvent = Schemas['OrganizationEventResponse'];
