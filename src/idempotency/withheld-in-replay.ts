import { addRouteConfig } from '../common/route-config.js';

/** A secret field of a route's answer: sent once, never stored, replaced by a notice in a replay. */
export interface WithheldField {
  field: string;
  notice: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The field of this route's answer that its stored copy (for an `Idempotency-Key` replay) leaves out. */
    withheldInReplay?: WithheldField;
  }
}

/** The notice a replayed key creation or rotation carries instead of the key. */
export const KEY_WITHHELD_NOTICE =
  'The full key is shown once, in the first answer, and is not kept. If it was lost, rotate this key.';

/** The notice a replayed webhook creation or secret rotation carries instead of the secret. */
export const SECRET_WITHHELD_NOTICE =
  'The signing secret is shown once, in the first answer, and is not kept. If it was lost, rotate the secret.';

/** The notice a replayed invitation carries instead of its token. */
export const INVITATION_WITHHELD_NOTICE =
  'The invitation token is shown once, in the first answer, and is not kept. If it was lost, revoke this invitation and invite again.';

/**
 * The route's answer carries a secret (a full API key) that must rest nowhere: the stored answer for a
 * replay drops `field` and carries `<field>_withheld: notice` instead.
 */
export function WithheldInReplay(field: string, notice: string): MethodDecorator {
  return (_target, _property, descriptor) => {
    addRouteConfig(descriptor.value as object, { withheldInReplay: { field, notice } });
  };
}

/** The answer's body as it may be stored: the withheld field, if any, replaced by its notice. */
export function storableBody(body: string, withheld: WithheldField | undefined): string {
  if (!withheld || !body.startsWith('{')) return body;
  const parsed = JSON.parse(body) as Record<string, unknown>;
  if (!(withheld.field in parsed)) return body;
  const kept = Object.entries(parsed).filter(([field]) => field !== withheld.field);
  return JSON.stringify(Object.fromEntries([...kept, [`${withheld.field}_withheld`, withheld.notice]]));
}
