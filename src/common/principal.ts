/** Who is calling, whichever credential they used. Every controller reads this and nothing else. */
export interface Principal {
  kind: 'jwt' | 'api_key';
  userId: string;
  organizationId: string;
  /** Only a JWT carries admin rights: an admin's API key is an ordinary caller. */
  isAdmin: boolean;
  apiKeyId: string | null;
  keyPrefix: string | null;
}
