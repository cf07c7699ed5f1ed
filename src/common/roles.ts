/**
 * A member's role in an organization (CONTRACT, third edition), lowest first: each may do what the
 * ones before it may. `owner` is held by exactly one member of each organization.
 */
export const TEAM_ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

export type TeamRole = (typeof TEAM_ROLES)[number];

/** The roles an invitation or a role change may give: ownership only moves by a transfer. */
export const ASSIGNABLE_ROLES = ['admin', 'member', 'viewer'] as const;

export type AssignableRole = (typeof ASSIGNABLE_ROLES)[number];

export function isTeamRole(value: unknown): value is TeamRole {
  return (TEAM_ROLES as readonly unknown[]).includes(value);
}

/** Whether `role` may do what `needed` may. */
export function roleAtLeast(role: TeamRole, needed: TeamRole): boolean {
  return TEAM_ROLES.indexOf(role) >= TEAM_ROLES.indexOf(needed);
}
