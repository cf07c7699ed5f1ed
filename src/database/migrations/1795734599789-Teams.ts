import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Teams (CONTRACT, third edition): a user may belong to several organizations with one role in each
 * (`memberships`, exactly one `owner` per organization, which the partial unique index enforces),
 * invitations (only a hash of the token is kept), and the organization's membership audit log. Every
 * current organization owner becomes the `owner` member of that organization.
 *
 * `member.joined` and `member.removed` webhooks are written by triggers on `memberships`, in the
 * transaction of the change, as the other events are (see the Webhooks migration).
 */
export class Teams1795734599789 implements MigrationInterface {
  name = 'Teams1795734599789';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE memberships (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role varchar(10) NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
        joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (organization_id, user_id)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX memberships_one_owner ON memberships (organization_id) WHERE role = 'owner'`,
    );
    await queryRunner.query(`CREATE INDEX memberships_user_idx ON memberships (user_id)`);
    await queryRunner.query(`
      INSERT INTO memberships (organization_id, user_id, role, joined_at)
      SELECT o.id, o.owner_id, 'owner', o.created_at
        FROM organizations o JOIN users u ON u.id = o.owner_id`);
    // The organization a user last switched to: what a sign-in without `organization_id` acts in.
    await queryRunner.query(
      `ALTER TABLE users ADD COLUMN last_organization_id uuid REFERENCES organizations(id) ON DELETE SET NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE invitations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        -- Lower-cased, as users' e-mails are.
        email varchar(254) NOT NULL,
        role varchar(10) NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
        -- SHA-256 of the inv_ token, which is shown once and never stored.
        token_hash char(64) NOT NULL,
        invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        accepted_by uuid REFERENCES users(id) ON DELETE SET NULL,
        revoked_at timestamptz
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX invitations_token_hash_key ON invitations (token_hash)`);
    await queryRunner.query(
      `CREATE INDEX invitations_pending_idx ON invitations (organization_id, created_at DESC) WHERE accepted_at IS NULL AND revoked_at IS NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE membership_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        action varchar(40) NOT NULL,
        actor_user_id uuid,
        target_user_id uuid,
        changes jsonb,
        request_id varchar(200),
        ip varchar(64),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(
      `CREATE INDEX membership_events_org_created_idx ON membership_events (organization_id, created_at DESC, id DESC)`,
    );

    await queryRunner.query(`
      CREATE FUNCTION webhook_member_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM webhook_record_event(NEW.organization_id, 'member.joined',
            jsonb_build_object('user_id', NEW.user_id, 'role', NEW.role));
        ELSE
          PERFORM webhook_record_event(OLD.organization_id, 'member.removed',
            jsonb_build_object('user_id', OLD.user_id, 'role', OLD.role));
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_member_joined AFTER INSERT ON memberships
      FOR EACH ROW EXECUTE FUNCTION webhook_member_event()`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_member_removed AFTER DELETE ON memberships
      FOR EACH ROW EXECUTE FUNCTION webhook_member_event()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER webhook_member_removed ON memberships`);
    await queryRunner.query(`DROP TRIGGER webhook_member_joined ON memberships`);
    await queryRunner.query(`DROP FUNCTION webhook_member_event()`);
    await queryRunner.query(`DROP TABLE membership_events`);
    await queryRunner.query(`DROP TABLE invitations`);
    await queryRunner.query(`ALTER TABLE users DROP COLUMN last_organization_id`);
    await queryRunner.query(`DROP TABLE memberships`);
  }
}
