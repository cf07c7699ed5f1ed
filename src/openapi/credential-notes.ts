import type { AuthRequirement } from '../common/auth.decorators.js';
import type { TeamRole } from '../common/roles.js';
import type { ApiKeyScope } from '../common/scopes.js';

const ADMIN_NOTE =
  "**Administrators only**: a platform administrator's JWT access token; anyone else, and any API key, gets 403.";
const JWT_ONLY_NOTE = '**JWT access token only**: an API key (either header) gets 401.';
const ROLE_NOTES: Record<Exclude<TeamRole, 'viewer'>, string> = {
  member:
    "**Role `member` or above** in the organization (an API key acts with its creator's role): a `viewer` gets 403.",
  admin:
    "**Role `admin` or `owner`** in the organization (an API key acts with its creator's role): anyone else gets 403.",
  owner: "**The organization's owner only**: anyone else gets 403.",
};
const scopeNote = (scope: ApiKeyScope) =>
  `**Scope \`${scope}\`**: an API key limited to scopes needs this one, or gets 403 (after 401, before the route's own checks). JWTs are not scoped.`;

/** What a route's requirement (`@Authenticated`) tells its reader, first in its description, in this order. */
export function credentialNotes(requirement: AuthRequirement): string[] {
  if (requirement.public) return [];
  return [
    ...(requirement.scope ? [scopeNote(requirement.scope)] : []),
    ...(requirement.role && requirement.role !== 'viewer' && !requirement.adminOnly
      ? [ROLE_NOTES[requirement.role]]
      : []),
    ...(requirement.jwtOnly ? [JWT_ONLY_NOTE] : []),
    ...(requirement.adminOnly ? [ADMIN_NOTE] : []),
  ];
}
