import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhooks (CONTRACT, third edition): endpoints, an outbox of events and one delivery row per event and
 * endpoint, the queue the delivery workers claim from.
 *
 * Events are written by triggers on the rows whose change causes them (documents, the key audit log,
 * the credit counters), so they are recorded in the transaction of that change whichever code path makes
 * it, and nothing is recorded for an organization without an endpoint that wants the event.
 */
export class Webhooks1795725638525 implements MigrationInterface {
  name = 'Webhooks1795725638525';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        url varchar(2048) NOT NULL,
        description varchar(500) NOT NULL DEFAULT '',
        events text[] NOT NULL,
        enabled boolean NOT NULL DEFAULT true,
        disabled_reason varchar(200),
        -- AES-256-GCM under WEBHOOK_SECRET_KEY: the secret must sign, so it cannot be only a hash.
        secret_encrypted text NOT NULL,
        previous_secret_encrypted text,
        previous_secret_expires_at timestamptz,
        -- The first failure since the last success: five days of them disable the endpoint.
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_endpoints_organization_idx ON webhook_endpoints (organization_id, created_at)`,
    );
    await queryRunner.query(`
      CREATE TABLE webhook_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        type varchar(40) NOT NULL,
        -- The body sent, exactly: {"type", "timestamp", "data"}.
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event_id uuid NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        type varchar(40) NOT NULL,
        status varchar(16) NOT NULL DEFAULT 'pending',
        attempts integer NOT NULL DEFAULT 0,
        -- pending, sending (claimed by a worker), delivered, failed. When it is due; a worker's claim
        -- (status sending) moves it past the send's timeout: a lease. No other worker takes it meanwhile,
        -- and if the worker dies the delivery is simply due again when the lease ends.
        next_attempt_at timestamptz,
        response_status integer,
        response_body varchar(1024),
        last_error varchar(300),
        last_attempt_at timestamptz,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'sending')`,
    );
    await queryRunner.query(
      `CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC)`,
    );
    await queryRunner.query(`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`);
    // "Once each per period" and "7 days and 1 day before": one row per event that may happen only once.
    await queryRunner.query(`
      CREATE TABLE webhook_event_marks (
        mark varchar(200) PRIMARY KEY,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);

    // The outbox's one way in: the event and a delivery per enabled endpoint that wants it, or nothing.
    await queryRunner.query(`
      CREATE FUNCTION webhook_record_event(p_organization uuid, p_type text, p_data jsonb) RETURNS void
      LANGUAGE plpgsql AS $$
      DECLARE
        v_event uuid;
      BEGIN
        IF NOT EXISTS (SELECT 1 FROM webhook_endpoints
                        WHERE organization_id = p_organization AND enabled AND p_type = ANY (events)) THEN
          RETURN;
        END IF;
        INSERT INTO webhook_events (organization_id, type, payload)
        VALUES (p_organization, p_type, jsonb_build_object(
          'type', p_type,
          'timestamp', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
          'data', p_data))
        RETURNING id INTO v_event;
        INSERT INTO webhook_deliveries (event_id, endpoint_id, type, next_attempt_at)
        SELECT v_event, id, p_type, clock_timestamp() FROM webhook_endpoints
         WHERE organization_id = p_organization AND enabled AND p_type = ANY (events);
      END $$`);

    // Private documents: indexed when stored (the chunks go in the same transaction), deleted with their row.
    await queryRunner.query(`
      CREATE FUNCTION webhook_document_event() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          PERFORM webhook_record_event(NEW.organization_id, 'document.indexed',
            jsonb_build_object('document_id', NEW.id, 'collection_id', NULL, 'title', NEW.title));
        ELSE
          PERFORM webhook_record_event(OLD.organization_id, 'document.deleted',
            jsonb_build_object('document_id', OLD.id, 'collection_id', NULL, 'title', OLD.title));
        END IF;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_document_indexed AFTER INSERT ON documents
      FOR EACH ROW WHEN (NEW.organization_id IS NOT NULL) EXECUTE FUNCTION webhook_document_event()`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_document_deleted AFTER DELETE ON documents
      FOR EACH ROW WHEN (OLD.organization_id IS NOT NULL) EXECUTE FUNCTION webhook_document_event()`);

    // Keys: every create, rotate and revoke writes its audit line in its own transaction; the event follows it.
    await queryRunner.query(`
      CREATE FUNCTION webhook_api_key_event() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        v_key_id uuid := NEW.key_id;
        v_name text;
        v_prefix text;
        v_data jsonb;
      BEGIN
        IF NEW.action NOT IN ('created', 'revoked', 'rotated') THEN RETURN NULL; END IF;
        IF NEW.action = 'rotated' THEN v_key_id := (NEW.changes -> 'id' ->> 1)::uuid; END IF;
        SELECT name, key_prefix INTO v_name, v_prefix FROM api_keys WHERE id = v_key_id;
        v_data := jsonb_build_object('key_id', v_key_id, 'key_prefix', coalesce(v_prefix, NEW.key_prefix), 'name', v_name);
        IF NEW.action = 'rotated' THEN v_data := v_data || jsonb_build_object('rotated_from', NEW.key_id); END IF;
        PERFORM webhook_record_event(NEW.organization_id, 'api_key.' || NEW.action, v_data);
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_api_key_event AFTER INSERT ON api_key_events
      FOR EACH ROW EXECUTE FUNCTION webhook_api_key_event()`);

    // 80 % and 100 % of the organization's quota, once each per period (the mark is the "once").
    await queryRunner.query(`
      CREATE FUNCTION webhook_quota_threshold() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        v_percent int;
      BEGIN
        IF NEW.monthly_credits <= 0 THEN RETURN NULL; END IF;
        FOREACH v_percent IN ARRAY ARRAY[80, 100] LOOP
          -- bigint: credits are PostgreSQL integers, and a hundred times one would overflow.
          CONTINUE WHEN NEW.credits_used::bigint * 100 < v_percent::bigint * NEW.monthly_credits;
          CONTINUE WHEN OLD.period_start = NEW.period_start AND OLD.monthly_credits = NEW.monthly_credits
                        AND OLD.credits_used::bigint * 100 >= v_percent::bigint * NEW.monthly_credits;
          INSERT INTO webhook_event_marks (mark)
          VALUES ('usage:' || NEW.organization_id || ':' || NEW.period_start || ':' || v_percent)
          ON CONFLICT DO NOTHING;
          CONTINUE WHEN NOT FOUND;
          PERFORM webhook_record_event(NEW.organization_id, 'usage.threshold', jsonb_build_object(
            'percent', v_percent, 'credits_total', NEW.monthly_credits, 'credits_used', NEW.credits_used));
        END LOOP;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_quota_threshold AFTER UPDATE OF credits_used, monthly_credits ON subscriptions
      FOR EACH ROW
      -- Checked without calling the function: below 80 % (nearly every spend) the trigger costs nothing more.
      WHEN (NEW.monthly_credits > 0 AND NEW.credits_used::bigint * 100 >= 80::bigint * NEW.monthly_credits)
      EXECUTE FUNCTION webhook_quota_threshold()`);

    // The same for a key's monthly cap (its counter row moves in the spend's statement).
    await queryRunner.query(`
      CREATE FUNCTION webhook_key_cap_threshold() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        v_percent int;
        v_cap int;
        v_organization uuid;
        v_key uuid;
      BEGIN
        IF NEW.credits_used <= OLD.credits_used AND NEW.period_start = OLD.period_start THEN RETURN NULL; END IF;
        -- The counter is its lineage's (the first key's id); the cap and the key named are the lineage's
        -- newest key's, as the spend itself reads them (SubscriptionsRepository).
        SELECT monthly_credit_limit, organization_id, id INTO v_cap, v_organization, v_key
          FROM api_keys WHERE lineage_id = NEW.api_key_id ORDER BY created_at DESC LIMIT 1;
        IF v_cap IS NULL OR v_cap <= 0 THEN RETURN NULL; END IF;
        FOREACH v_percent IN ARRAY ARRAY[80, 100] LOOP
          CONTINUE WHEN NEW.credits_used::bigint * 100 < v_percent::bigint * v_cap;
          INSERT INTO webhook_event_marks (mark)
          VALUES ('usage:key:' || NEW.api_key_id || ':' || NEW.period_start || ':' || v_percent)
          ON CONFLICT DO NOTHING;
          CONTINUE WHEN NOT FOUND;
          PERFORM webhook_record_event(v_organization, 'usage.threshold', jsonb_build_object(
            'percent', v_percent, 'credits_total', v_cap, 'credits_used', NEW.credits_used, 'key_id', v_key));
        END LOOP;
        RETURN NULL;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER webhook_key_cap_threshold AFTER UPDATE OF credits_used, period_start ON api_key_credits
      FOR EACH ROW WHEN (NEW.credits_used > OLD.credits_used OR NEW.period_start <> OLD.period_start)
      EXECUTE FUNCTION webhook_key_cap_threshold()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER webhook_key_cap_threshold ON api_key_credits`);
    await queryRunner.query(`DROP TRIGGER webhook_quota_threshold ON subscriptions`);
    await queryRunner.query(`DROP TRIGGER webhook_api_key_event ON api_key_events`);
    await queryRunner.query(`DROP TRIGGER webhook_document_deleted ON documents`);
    await queryRunner.query(`DROP TRIGGER webhook_document_indexed ON documents`);
    await queryRunner.query(`DROP FUNCTION webhook_key_cap_threshold()`);
    await queryRunner.query(`DROP FUNCTION webhook_quota_threshold()`);
    await queryRunner.query(`DROP FUNCTION webhook_api_key_event()`);
    await queryRunner.query(`DROP FUNCTION webhook_document_event()`);
    await queryRunner.query(`DROP FUNCTION webhook_record_event(uuid, text, jsonb)`);
    await queryRunner.query(`DROP TABLE webhook_event_marks`);
    await queryRunner.query(`DROP TABLE webhook_deliveries`);
    await queryRunner.query(`DROP TABLE webhook_events`);
    await queryRunner.query(`DROP TABLE webhook_endpoints`);
  }
}
