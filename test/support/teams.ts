import { type SignedInUser, signUp, type TestApp } from './app.js';

export const MEMBERS = '/v1/organizations/current/members/';
export const INVITATIONS = '/v1/organizations/current/invitations/';
export const ACCEPT = '/v1/invitations/accept/';
export const PERMISSION_DENIED = { detail: 'You do not have permission to perform this action.' };
export const INVITATION_INVALID = { detail: 'This invitation is invalid or has expired.' };

export type Role = 'admin' | 'member' | 'viewer';

/** Invites `email` to the organization `by` acts in; answers the created invitation (with its token). */
export async function invite(test: TestApp, by: SignedInUser, email: string, role: Role) {
  const response = await test.http().post(INVITATIONS).set(by.auth).send({ email, role }).expect(201);
  return response.body as {
    id: string;
    email: string;
    role: Role;
    token: string;
    created_at: string;
    expires_at: string;
  };
}

/** Switches `user` to the organization: its new tokens act there. */
export async function switchTo(test: TestApp, user: SignedInUser, organizationId: string): Promise<SignedInUser> {
  const response = await test
    .http()
    .post('/auth/jwt/switch/')
    .set(user.auth)
    .send({ organization_id: organizationId })
    .expect(200);
  return {
    ...user,
    access: response.body.access,
    refresh: response.body.refresh,
    auth: { Authorization: `Bearer ${response.body.access}` },
  };
}

export async function organizationOf(test: TestApp, user: SignedInUser): Promise<string> {
  return (await test.http().get('/auth/users/me/').set(user.auth).expect(200)).body.organization_id;
}

/**
 * A new user who joins the organization `owner` acts in with `role`, signed in there (its tokens act
 * in that organization).
 */
export async function addMember(test: TestApp, owner: SignedInUser, role: Role): Promise<SignedInUser> {
  const user = await signUp(test);
  const { token } = await invite(test, owner, user.email, role);
  const accepted = await test.http().post(ACCEPT).set(user.auth).send({ token }).expect(200);
  return switchTo(test, user, accepted.body.organization_id);
}
