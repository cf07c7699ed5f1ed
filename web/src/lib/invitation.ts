import { hrefFor } from '../router';

/** The dashboard's page where an invitation is accepted. */
export const ACCEPT_PATH = 'invitations/accept';
const STORAGE_KEY = 'kqs.invitation';

/**
 * The link an invited person opens: the token travels in the fragment, which the browser never sends
 * to a server (no access log, no Referer holds it).
 */
export function invitationLink(token: string): string {
  return `${location.origin}${hrefFor(ACCEPT_PATH)}#${token}`;
}

/**
 * The token of the invitation being accepted: the link's fragment, kept in this tab's sessionStorage
 * so that it survives signing in or creating an account first.
 */
export function pendingInvitation(): string | null {
  const fragment = location.hash.replace(/^#/, '').trim();
  // Only what looks like an invitation's token; a page anchor is not one.
  const fromLink = fragment.startsWith('inv_') ? fragment : '';
  try {
    if (fromLink) sessionStorage.setItem(STORAGE_KEY, fromLink);
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return fromLink || null;
  }
}

export function forgetInvitation(): void {
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing kept
  }
}
