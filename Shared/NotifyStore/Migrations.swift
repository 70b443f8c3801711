import Logging
import PostgresNIO

/// The schema, versioned; storage applies what is missing at start-up under an advisory lock,
/// so several storage instances may start at once.
public struct Migrations: Sendable {
    let client: PostgresClient
    let readerRole: String
    let logger: Logger

    /// Migrates the database `client` reaches, and grants `readerRole` (if it exists) reading every table.
    public init(client: PostgresClient, readerRole: String, logger: Logger) {
        self.client = client
        self.readerRole = readerRole
        self.logger = logger
    }

    private static let steps: [(version: Int, statements: [String])] = [
        (1, [
            """
            CREATE TABLE apps (
                app_id text PRIMARY KEY,
                name text NOT NULL,
                api_key_hash text NOT NULL UNIQUE,
                client_signing_key text NOT NULL,
                broker_user text,
                created_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE app_credentials (
                app_id text NOT NULL REFERENCES apps ON DELETE CASCADE,
                provider text NOT NULL,
                credentials jsonb NOT NULL,
                updated_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, provider)
            )
            """,
            """
            CREATE TABLE subscriptions (
                subscription_id uuid PRIMARY KEY,
                app_id text NOT NULL REFERENCES apps ON DELETE CASCADE,
                user_id text NOT NULL,
                platform text NOT NULL,
                push_token text NOT NULL,
                app_package text,
                display_name text,
                expires_at timestamptz NOT NULL,
                registered_at timestamptz NOT NULL,
                UNIQUE (app_id, platform, push_token)
            )
            """,
            "CREATE INDEX subscriptions_by_user ON subscriptions (app_id, user_id)",
            """
            CREATE TABLE user_sequences (
                app_id text NOT NULL,
                user_id text NOT NULL,
                last_sequence bigint NOT NULL,
                PRIMARY KEY (app_id, user_id)
            )
            """,
            """
            CREATE TABLE notifications (
                notification_id uuid PRIMARY KEY,
                app_id text NOT NULL,
                user_id text NOT NULL,
                app_notification_id text,
                content jsonb NOT NULL,
                read_state text NOT NULL DEFAULT 'unread',
                user_action_state text NOT NULL DEFAULT 'noInteraction',
                status text NOT NULL DEFAULT 'active',
                sequence bigint NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL,
                expires_at timestamptz NOT NULL
            )
            """,
            "CREATE INDEX notifications_by_user ON notifications (app_id, user_id, sequence)",
            "CREATE INDEX notifications_unread ON notifications (app_id, user_id) WHERE read_state = 'unread' AND status = 'active'",
            """
            CREATE TABLE changes (
                app_id text NOT NULL,
                user_id text NOT NULL,
                sequence bigint NOT NULL,
                notification_id uuid NOT NULL,
                kind text NOT NULL,
                changed_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, user_id, sequence)
            )
            """,
            """
            CREATE TABLE applied_commands (
                command_id uuid PRIMARY KEY,
                applied_at timestamptz NOT NULL,
                events text
            )
            """,
        ]),
        (2, [
            "ALTER TABLE user_sequences ADD COLUMN purged_through bigint NOT NULL DEFAULT 0",
            "CREATE INDEX notifications_due ON notifications (expires_at) WHERE status = 'active'",
            "CREATE INDEX notifications_history ON notifications (app_id, user_id, created_at DESC, notification_id)",
            "CREATE INDEX changes_by_time ON changes (changed_at)",
            "CREATE INDEX applied_commands_by_time ON applied_commands (applied_at)",
        ]),
        (3, [
            "ALTER TABLE app_credentials ADD COLUMN rejected_reason text, ADD COLUMN rejected_at timestamptz",
            """
            CREATE TABLE delivery_log (
                push_id uuid NOT NULL,
                attempt int NOT NULL,
                result text NOT NULL,
                app_id text NOT NULL,
                notification_id uuid NOT NULL,
                subscription_id uuid NOT NULL,
                sequence bigint NOT NULL,
                platform text NOT NULL,
                status int,
                reason text,
                at timestamptz NOT NULL,
                PRIMARY KEY (push_id, attempt, result)
            )
            """,
            "CREATE INDEX delivery_log_by_notification ON delivery_log (app_id, notification_id, at)",
        ]),
        (4, [
            "ALTER TABLE subscriptions ADD COLUMN push_keys jsonb",
        ]),
        (5, [
            """
            CREATE TABLE event_source_members (
                app_id text NOT NULL,
                event_source text NOT NULL,
                subscription_id uuid NOT NULL REFERENCES subscriptions ON DELETE CASCADE,
                PRIMARY KEY (app_id, event_source, subscription_id)
            )
            """,
            "CREATE INDEX event_source_members_by_subscription ON event_source_members (subscription_id)",
            """
            CREATE TABLE broadcasts (
                notification_id uuid PRIMARY KEY,
                app_id text NOT NULL,
                event_source text NOT NULL,
                content jsonb NOT NULL,
                created_at timestamptz NOT NULL,
                updated_at timestamptz NOT NULL
            )
            """,
        ]),
        (6, [
            // One index instead of two for a row per push: the key that makes a recorded outcome unique, led by
            // the notification it is read by (a notification's pushes also land on one index page, not several).
            "ALTER TABLE delivery_log DROP CONSTRAINT delivery_log_pkey",
            "DROP INDEX delivery_log_by_notification",
            "CREATE UNIQUE INDEX delivery_log_by_notification ON delivery_log (app_id, notification_id, push_id, attempt, result)",
        ]),
        (7, [
            // The badge is kept as a count per user, changed by the statements that change notifications, instead
            // of being counted from the notifications on every write (a cost that grew with a user's unread ones).
            // Triggers first: they lock the table against writers, so the count taken next misses nothing.
            """
            CREATE TABLE unread_counts (
                app_id text NOT NULL,
                user_id text NOT NULL,
                unread bigint NOT NULL,
                PRIMARY KEY (app_id, user_id)
            ) WITH (fillfactor = 50)
            """,
            // Room on each page, so that a row updated by every batch is rewritten in place (HOT), without index entries.
            "ALTER TABLE user_sequences SET (fillfactor = 50)",
            """
            CREATE FUNCTION count_unread_changes() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO unread_counts AS c (app_id, user_id, unread)
                    SELECT app_id, user_id, count(*) FROM new_rows WHERE read_state = 'unread' AND status = 'active'
                    GROUP BY app_id, user_id ORDER BY app_id, user_id
                    ON CONFLICT (app_id, user_id) DO UPDATE SET unread = c.unread + EXCLUDED.unread;
                ELSIF TG_OP = 'UPDATE' THEN
                    INSERT INTO unread_counts AS c (app_id, user_id, unread)
                    SELECT app_id, user_id, sum(delta) FROM (
                        SELECT app_id, user_id, 1 AS delta FROM new_rows WHERE read_state = 'unread' AND status = 'active'
                        UNION ALL
                        SELECT app_id, user_id, -1 FROM old_rows WHERE read_state = 'unread' AND status = 'active'
                    ) AS d
                    GROUP BY app_id, user_id HAVING sum(delta) <> 0 ORDER BY app_id, user_id
                    ON CONFLICT (app_id, user_id) DO UPDATE SET unread = c.unread + EXCLUDED.unread;
                ELSE
                    UPDATE unread_counts AS c SET unread = c.unread - d.gone
                    FROM (SELECT app_id, user_id, count(*) AS gone FROM old_rows WHERE read_state = 'unread' AND status = 'active'
                          GROUP BY app_id, user_id) AS d
                    WHERE c.app_id = d.app_id AND c.user_id = d.user_id;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER notifications_count_unread_inserted AFTER INSERT ON notifications
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_unread_changes()
            """,
            """
            CREATE TRIGGER notifications_count_unread_updated AFTER UPDATE ON notifications
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_unread_changes()
            """,
            """
            CREATE TRIGGER notifications_count_unread_deleted AFTER DELETE ON notifications
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_unread_changes()
            """,
            """
            INSERT INTO unread_counts (app_id, user_id, unread)
            SELECT app_id, user_id, count(*) FROM notifications WHERE read_state = 'unread' AND status = 'active' GROUP BY app_id, user_id
            """,
            "DROP INDEX notifications_unread",
            // Never read since the change log took over sync; it cost an index entry on every write.
            "DROP INDEX notifications_by_user",
        ]),
        (8, [
            // The delivery log, a row per notification and feedback message instead of a row per push: the
            // outcomes are parallel arrays, so a batch of pushes costs one row and one index entry. The key
            // hashes every (push, attempt, result) of the row, so a redelivered message is written once.
            """
            CREATE TABLE delivery_records (
                app_id text NOT NULL,
                notification_id uuid NOT NULL,
                record_key uuid NOT NULL,
                recorded_at timestamptz NOT NULL,
                push_ids uuid[] NOT NULL,
                attempts int4[] NOT NULL,
                results text[] NOT NULL,
                subscription_ids uuid[] NOT NULL,
                sequences int8[] NOT NULL,
                platforms text[] NOT NULL,
                statuses int4[] NOT NULL,
                reasons text[] NOT NULL,
                ats timestamptz[] NOT NULL,
                PRIMARY KEY (app_id, notification_id, record_key)
            )
            """,
            """
            INSERT INTO delivery_records
            SELECT app_id, notification_id, gen_random_uuid(), max(at), array_agg(push_id ORDER BY at, attempt), array_agg(attempt ORDER BY at, attempt),
                   array_agg(result ORDER BY at, attempt), array_agg(subscription_id ORDER BY at, attempt), array_agg(sequence ORDER BY at, attempt),
                   array_agg(platform ORDER BY at, attempt), array_agg(coalesce(status, 0) ORDER BY at, attempt),
                   array_agg(coalesce(reason, '') ORDER BY at, attempt), array_agg(at ORDER BY at, attempt)
            FROM delivery_log GROUP BY app_id, notification_id
            """,
            "DROP TABLE delivery_log",
        ]),
        (9, [
            // A version per user of the user's set of devices, raised by every statement that adds, changes or
            // removes one of the user's subscriptions. Change events carry it, so fanout can tell whether the
            // devices it read before for that user are still the ones to push to (`DeviceCache`).
            // Triggers first: they lock the table against writers, so the versions filled in next miss nothing.
            """
            CREATE TABLE device_versions (
                app_id text NOT NULL,
                user_id text NOT NULL,
                version bigint NOT NULL,
                PRIMARY KEY (app_id, user_id)
            )
            """,
            """
            CREATE FUNCTION count_device_changes() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO device_versions AS v (app_id, user_id, version)
                    SELECT DISTINCT app_id, user_id, 1 FROM new_rows ORDER BY app_id, user_id
                    ON CONFLICT (app_id, user_id) DO UPDATE SET version = v.version + 1;
                ELSIF TG_OP = 'UPDATE' THEN
                    INSERT INTO device_versions AS v (app_id, user_id, version)
                    SELECT app_id, user_id, 1 FROM (SELECT app_id, user_id FROM old_rows UNION SELECT app_id, user_id FROM new_rows) AS u
                    ORDER BY app_id, user_id
                    ON CONFLICT (app_id, user_id) DO UPDATE SET version = v.version + 1;
                ELSE
                    INSERT INTO device_versions AS v (app_id, user_id, version)
                    SELECT DISTINCT app_id, user_id, 1 FROM old_rows ORDER BY app_id, user_id
                    ON CONFLICT (app_id, user_id) DO UPDATE SET version = v.version + 1;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER subscriptions_count_inserted AFTER INSERT ON subscriptions
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_device_changes()
            """,
            """
            CREATE TRIGGER subscriptions_count_updated AFTER UPDATE ON subscriptions
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_device_changes()
            """,
            """
            CREATE TRIGGER subscriptions_count_deleted AFTER DELETE ON subscriptions
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_device_changes()
            """,
            "INSERT INTO device_versions (app_id, user_id, version) SELECT DISTINCT app_id, user_id, 1 FROM subscriptions",
        ]),
        (10, [
            // Registering looks a push token up by (app, platform, token). Led by app_id, this index tied on cost with
            // the token's unique index whenever the planner's statistics did not know the app yet (a new app
            // registering its first devices), and won: each registration then read every subscription of the app.
            // Led by user_id, it serves the per-user reads only.
            "DROP INDEX subscriptions_by_user",
            "CREATE INDEX subscriptions_by_user ON subscriptions (user_id, app_id)",
        ]),
        (11, [
            // A broadcast's delivery records hold thousands of outcomes a row, compressed as they are stored; pglz took
            // 6 % of PostgreSQL's CPU in a broadcast, lz4 a fraction of that. Rows stored before keep pglz (both read
            // back alike). A server built without lz4 keeps pglz.
            """
            DO $$
            BEGIN
                ALTER TABLE delivery_records
                    ALTER COLUMN push_ids SET COMPRESSION lz4, ALTER COLUMN attempts SET COMPRESSION lz4,
                    ALTER COLUMN results SET COMPRESSION lz4, ALTER COLUMN subscription_ids SET COMPRESSION lz4,
                    ALTER COLUMN sequences SET COMPRESSION lz4, ALTER COLUMN platforms SET COMPRESSION lz4,
                    ALTER COLUMN statuses SET COMPRESSION lz4, ALTER COLUMN reasons SET COMPRESSION lz4,
                    ALTER COLUMN ats SET COMPRESSION lz4;
            EXCEPTION WHEN feature_not_supported THEN
                RAISE NOTICE 'this server has no lz4: delivery records stay compressed with pglz';
            END
            $$
            """,
        ]),
        // The outbox keeps the bytes it re-emits: change events in the wire format (protobuf), no longer JSON text.
        (12, ["ALTER TABLE applied_commands ADD COLUMN wire_events bytea"]),
        (13, ["ALTER TABLE applied_commands DROP COLUMN events"]),
        // An app's broker users, which ingest creates in RabbitMQ: the current one, and ones a rotation retires. The
        // operator-named users of apps.broker_user move here; the column stays one release for the ingest instances that
        // still read it during a rolling deploy.
        (14, [
            """
            CREATE TABLE app_broker_users (
                user_name text PRIMARY KEY,
                app_id text NOT NULL REFERENCES apps ON DELETE CASCADE,
                created_at timestamptz NOT NULL,
                retires_at timestamptz
            )
            """,
            "CREATE INDEX app_broker_users_by_app ON app_broker_users (app_id)",
            "CREATE INDEX app_broker_users_retiring ON app_broker_users (retires_at) WHERE retires_at IS NOT NULL",
            """
            INSERT INTO app_broker_users (user_name, app_id, created_at)
            SELECT broker_user, app_id, created_at FROM apps WHERE broker_user IS NOT NULL ON CONFLICT DO NOTHING
            """,
        ]),
        // Event sources become a resource with a subscription policy. The names devices joined before, which any user
        // could join, become open sources.
        (15, [
            """
            CREATE TABLE event_sources (
                app_id text NOT NULL REFERENCES apps ON DELETE CASCADE,
                name text NOT NULL,
                policy text NOT NULL,
                description text,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """,
            """
            INSERT INTO event_sources (app_id, name, policy, created_at)
            SELECT DISTINCT m.app_id, m.event_source, 'open', now() FROM event_source_members m JOIN apps a ON a.app_id = m.app_id
            ON CONFLICT DO NOTHING
            """,
        ]),
        // Back ends ingest polls for notifications.
        (16, [
            """
            CREATE TABLE poll_sources (
                app_id text NOT NULL REFERENCES apps ON DELETE CASCADE,
                name text NOT NULL,
                url text NOT NULL,
                interval_seconds int NOT NULL,
                authorization_header text,
                created_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, name)
            )
            """,
        ]),
        // Apps' webhooks: where to POST, the events recorded with the changes that cause them (an outbox, relayed to
        // webhooks.deliveries in order), and every attempt to deliver one.
        (17, [
            """
            CREATE TABLE app_webhooks (
                app_id text PRIMARY KEY REFERENCES apps ON DELETE CASCADE,
                url text NOT NULL,
                events text[] NOT NULL,
                secret text NOT NULL,
                created_at timestamptz NOT NULL
            )
            """,
            """
            CREATE TABLE webhook_events (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                event_id uuid NOT NULL UNIQUE,
                app_id text NOT NULL,
                type text NOT NULL,
                data jsonb NOT NULL,
                created_at timestamptz NOT NULL,
                published_at timestamptz
            )
            """,
            "CREATE INDEX webhook_events_unpublished ON webhook_events (seq) WHERE published_at IS NULL",
            """
            CREATE TABLE webhook_deliveries (
                event_id uuid NOT NULL,
                attempt int NOT NULL,
                app_id text NOT NULL,
                type text NOT NULL,
                status int,
                result text NOT NULL,
                reason text,
                at timestamptz NOT NULL,
                PRIMARY KEY (event_id, attempt)
            )
            """,
            "CREATE INDEX webhook_deliveries_by_app ON webhook_deliveries (app_id, at)",
        ]),
        // A broadcast in every member user's feed without a row per member: broadcasts are numbered per app (one counter
        // row per app, locked by the writing transaction, so numbers become visible in order, as a user's do), a member
        // sees the broadcasts of its sources published after it joined, and a user's read, dismiss or delete of one is a
        // row of its own, numbered in the user's sequence like any change. `user_broadcasts` is the one definition of
        // "the broadcasts in this user's feed", used by sync, history, state changes and the badge.
        (18, [
            "ALTER TABLE event_source_members ADD COLUMN joined_at timestamptz NOT NULL DEFAULT '-infinity'",
            "ALTER TABLE event_source_members ALTER COLUMN joined_at SET DEFAULT now()",
            "ALTER TABLE broadcasts ADD COLUMN seq bigint, ADD COLUMN expires_at timestamptz NOT NULL DEFAULT 'infinity'",
            """
            UPDATE broadcasts b SET seq = o.seq
            FROM (SELECT notification_id, row_number() OVER (PARTITION BY app_id ORDER BY updated_at, notification_id) AS seq FROM broadcasts) o
            WHERE o.notification_id = b.notification_id
            """,
            "ALTER TABLE broadcasts ALTER COLUMN seq SET NOT NULL",
            "CREATE UNIQUE INDEX broadcasts_in_order ON broadcasts (app_id, seq)",
            """
            CREATE TABLE broadcast_sequences (
                app_id text PRIMARY KEY,
                last_seq bigint NOT NULL
            )
            """,
            "INSERT INTO broadcast_sequences (app_id, last_seq) SELECT app_id, max(seq) FROM broadcasts GROUP BY app_id",
            """
            CREATE TABLE broadcast_states (
                app_id text NOT NULL,
                user_id text NOT NULL,
                notification_id uuid NOT NULL,
                read_state text NOT NULL,
                user_action_state text NOT NULL,
                status text NOT NULL,
                sequence bigint NOT NULL,
                updated_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, user_id, notification_id)
            )
            """,
            "CREATE INDEX broadcast_states_by_notification ON broadcast_states (notification_id)",
            """
            CREATE FUNCTION user_broadcasts(p_app text, p_user text) RETURNS SETOF broadcasts LANGUAGE sql STABLE AS $$
                SELECT b.* FROM broadcasts b
                JOIN (SELECT m.event_source, min(m.joined_at) AS joined_at
                      FROM subscriptions s JOIN event_source_members m ON m.subscription_id = s.subscription_id
                      WHERE s.user_id = p_user AND s.app_id = p_app AND m.app_id = p_app
                      GROUP BY m.event_source) j ON j.event_source = b.event_source AND b.created_at >= j.joined_at
                WHERE b.app_id = p_app
            $$
            """,
            """
            CREATE FUNCTION unread_broadcasts(p_app text, p_user text) RETURNS bigint LANGUAGE sql STABLE AS $$
                SELECT count(*) FROM user_broadcasts(p_app, p_user) b
                LEFT JOIN broadcast_states t ON t.app_id = p_app AND t.user_id = p_user AND t.notification_id = b.notification_id
                WHERE b.expires_at > now() AND coalesce(t.read_state, 'unread') = 'unread' AND coalesce(t.status, 'active') = 'active'
            $$
            """,
            "ALTER TABLE apps ADD COLUMN badge_mode text NOT NULL DEFAULT 'unread'",
        ]),
        // The badge number an app server sets for a user, shown where the app's badge mode is external. And the join time
        // of a member in its key's index, so a broadcast's pages of members stay index-only scans (reading each member's
        // row for it cost PostgreSQL about 1 µs more per push of a million-device broadcast, measured alternately).
        (19, [
            """
            ALTER TABLE event_source_members DROP CONSTRAINT event_source_members_pkey,
                ADD PRIMARY KEY (app_id, event_source, subscription_id) INCLUDE (joined_at)
            """,
            """
            CREATE TABLE external_badges (
                app_id text NOT NULL,
                user_id text NOT NULL,
                badge int NOT NULL,
                updated_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, user_id)
            )
            """,
        ]),
        // An app's publish rate limits, per ingest instance (NULL: the service's default).
        (20, [
            "ALTER TABLE apps ADD COLUMN requests_per_second int, ADD COLUMN notifications_per_second int",
        ]),
        // Secrets sealed (SecretKeyring): provider credentials move from plaintext jsonb to a text column that holds
        // them sealed (the rows copied here are sealed by SecretResealer as storage starts); the keys a rotation
        // replaced, accepted until their overlap ends.
        (21, [
            "ALTER TABLE app_credentials ADD COLUMN secret text",
            "UPDATE app_credentials SET secret = credentials::text",
            "ALTER TABLE app_credentials ALTER COLUMN secret SET NOT NULL, DROP COLUMN credentials",
            """
            ALTER TABLE apps ADD COLUMN previous_api_key_hash text, ADD COLUMN previous_api_key_retires_at timestamptz,
                ADD COLUMN previous_client_signing_key text, ADD COLUMN previous_client_signing_key_retires_at timestamptz
            """,
        ]),
        // Several app identities per provider (a phone app and a watch app): credentials per app package, "" for
        // devices of any other package.
        (22, [
            "ALTER TABLE app_credentials ADD COLUMN app_package text NOT NULL DEFAULT ''",
            "ALTER TABLE app_credentials DROP CONSTRAINT app_credentials_pkey, ADD PRIMARY KEY (app_id, provider, app_package)",
        ]),
        // How far each device synced its user's changes (recorded when it read a notification with a visual fallback).
        (23, [
            "ALTER TABLE subscriptions ADD COLUMN synced_sequence bigint",
        ]),
        // A broadcast's members with push options of their own: {"userId": {push options}}, null when none.
        (24, [
            "ALTER TABLE broadcasts ADD COLUMN recipient_push jsonb",
        ]),
        // The app's delivery log across its notifications, from a time on (`GET /v1/apps/{appId}/deliveries`,
        // `notifyctl tail --deliveries`): an index entry per feedback message written, not per push.
        (25, [
            "CREATE INDEX delivery_records_by_app ON delivery_records (app_id, recorded_at)",
        ]),
        // What each change event of a user carries (UserStateReader), in a function that plans its query once per
        // connection: as a prepared statement PostgreSQL planned it again at every execution (its generic plan,
        // costed for unnest's default 10 rows, never beat the custom one), 0.26-0.41 ms of each storage transaction's
        // ~2.3 ms at idle; through the function it takes about 0.05 ms (docs/benchmarks-history.md, "2026-11-24, 0049c4b").
        (26, [
            """
            CREATE FUNCTION user_states(p_apps text[], p_users text[])
            RETURNS TABLE (app_id text, user_id text, badge bigint, devices_version bigint)
            LANGUAGE plpgsql STABLE
            SET plan_cache_mode = force_generic_plan
            AS $$
            BEGIN
                RETURN QUERY
                SELECT u.app, u.usr,
                       (CASE a.badge_mode
                           WHEN 'none' THEN NULL
                           WHEN 'external' THEN coalesce((SELECT e.badge FROM external_badges e WHERE e.app_id = u.app AND e.user_id = u.usr), 0)
                           WHEN 'unreadIncludingBroadcasts' THEN coalesce(c.unread, 0) + unread_broadcasts(u.app, u.usr)
                           ELSE coalesce(c.unread, 0)
                       END)::bigint,
                       coalesce(d.version, 0)::bigint
                FROM (SELECT DISTINCT t.app, t.usr FROM unnest(p_apps, p_users) AS t(app, usr)) u
                LEFT JOIN apps a ON a.app_id = u.app
                LEFT JOIN unread_counts c ON c.app_id = u.app AND c.user_id = u.usr
                LEFT JOIN device_versions d ON d.app_id = u.app AND d.user_id = u.usr;
            END
            $$
            """,
        ]),
        // Every change of an app's row or of its broker users is announced on `AppRecord.changedChannel` (payload: the
        // app id) when its transaction commits: each ingest instance drops its cached copy at once (a rate limit, badge
        // mode, key rotation or deletion made through one instance holds on all), instead of after the cache's 30 s.
        (27, [
            """
            CREATE FUNCTION announce_app_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM pg_notify('notify_app_changed', CASE WHEN TG_OP = 'DELETE' THEN OLD.app_id ELSE NEW.app_id END);
                RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER apps_announce_change AFTER INSERT OR UPDATE OR DELETE ON apps FOR EACH ROW EXECUTE FUNCTION announce_app_change()",
            """
            CREATE TRIGGER app_broker_users_announce_change AFTER INSERT OR UPDATE OR DELETE ON app_broker_users
            FOR EACH ROW EXECUTE FUNCTION announce_app_change()
            """,
        ]),
        // The OpenID Connect provider whose ID tokens are user tokens of the app (NULL: none): its issuer, its key set's
        // URL when it is not discovered from the issuer, the audience tokens must name and the claim holding the user id.
        (29, [
            """
            ALTER TABLE apps ADD COLUMN identity_issuer text, ADD COLUMN identity_jwks_url text, ADD COLUMN identity_audience text,
                ADD COLUMN identity_user_id_claim text
            """,
        ]),
        // An app's scoped API keys (publish, read or admin), by hash; their creation and revocation are announced like
        // any change of the app, so every ingest instance takes a new key and refuses a revoked one at its next request.
        // A use is recorded at most once every 10 s per key and instance, and announces nothing.
        (30, [
            """
            CREATE TABLE app_api_keys (
                app_id text NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
                key_id text NOT NULL,
                key_hash text NOT NULL UNIQUE,
                scope text NOT NULL CHECK (scope IN ('publish', 'read', 'admin')),
                name text NOT NULL,
                created_at timestamptz NOT NULL,
                revoked_at timestamptz,
                last_used_at timestamptz,
                PRIMARY KEY (app_id, key_id)
            )
            """,
            """
            CREATE TRIGGER app_api_keys_announce_change AFTER INSERT OR DELETE OR UPDATE OF revoked_at ON app_api_keys
            FOR EACH ROW EXECUTE FUNCTION announce_app_change()
            """,
        ]),
        // Storage creates apps' broker users in RabbitMQ (`BrokerUserProvisioner`) from the hash of the password ingest
        // sends: a user is recorded first (`password_hash`), then created and marked (`provisioned_at`, the hash
        // cleared). Every user recorded before was created by ingest first. A deleted app's users are no longer
        // deleted with it: they are retired, and stay until they are deleted from RabbitMQ.
        (31, [
            "ALTER TABLE app_broker_users ADD COLUMN password_hash text, ADD COLUMN provisioned_at timestamptz",
            "UPDATE app_broker_users SET provisioned_at = created_at",
            "ALTER TABLE app_broker_users DROP CONSTRAINT app_broker_users_app_id_fkey",
            "CREATE INDEX app_broker_users_pending ON app_broker_users (created_at) WHERE provisioned_at IS NULL",
        ]),
        // The ledger of what poll sources served: the digest of the item each polled notification was last made from.
        // Storage skips a polled publish whose digest the ledger holds (however long ago its command was applied) and
        // ingest reads it to send only new or changed items. Rows go with their source (and so with the app).
        (32, [
            """
            CREATE TABLE poll_items (
                app_id text NOT NULL,
                source text NOT NULL,
                notification_id uuid NOT NULL,
                app_notification_id text NOT NULL,
                digest text NOT NULL,
                updated_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, source, notification_id),
                FOREIGN KEY (app_id, source) REFERENCES poll_sources (app_id, name) ON DELETE CASCADE
            )
            """,
        ]),
        // A broadcast's expiry and a user's leaving its source reach devices as changes. The expiry sweep numbers an
        // expired broadcast again in its app's broadcast order (`BroadcastExpiry`: one row written, whatever the
        // audience), so every member's next sync lists it as expired; `expiry_listed` marks the ones numbered. Those
        // that expired before are numbered here, in the order they expired (nothing is pushed: devices learn at their
        // next sync). A user leaving a source reads the source's broadcasts by time (`BroadcastRemoval`); the memberships
        // of a large leave (a source of many members deleted) wait in `broadcast_removals_pending` for the sweep to write
        // their removals a share at a time.
        (33, [
            "ALTER TABLE broadcasts ADD COLUMN expiry_listed boolean NOT NULL DEFAULT false",
            """
            WITH due AS (
                SELECT notification_id, app_id, row_number() OVER (PARTITION BY app_id ORDER BY expires_at, notification_id) AS n
                FROM broadcasts WHERE expires_at <= now()
            ),
            moved AS (
                UPDATE broadcasts b SET seq = s.last_seq + d.n, expiry_listed = true
                FROM due d JOIN broadcast_sequences s ON s.app_id = d.app_id
                WHERE b.notification_id = d.notification_id
                RETURNING b.app_id, b.seq
            )
            UPDATE broadcast_sequences s SET last_seq = m.top
            FROM (SELECT app_id, max(seq) AS top FROM moved GROUP BY app_id) m
            WHERE s.app_id = m.app_id
            """,
            "CREATE INDEX broadcasts_due ON broadcasts (expires_at) WHERE NOT expiry_listed",
            "CREATE INDEX broadcasts_by_source ON broadcasts (app_id, event_source, created_at)",
            """
            CREATE TABLE broadcast_removals_pending (
                app_id text NOT NULL,
                user_id text NOT NULL,
                event_source text NOT NULL,
                joined_at timestamptz NOT NULL,
                ended_at timestamptz NOT NULL,
                PRIMARY KEY (app_id, user_id, event_source)
            )
            """,
        ]),
        // The badge modes that count conversations (`unreadGroups`, the distinct `groupName`s of a user's unread, active
        // notifications, each one without a group counting alone) and those that add the unread broadcasts to any count.
        // Unread notifications are counted per group only for the apps in a groups mode: for the others the triggers cost
        // one probe of a partial index per statement. `user_states` is the one definition of the badge, for the changes'
        // events and, since this step, for every member of a broadcast's audience.
        (34, [
            """
            CREATE TABLE unread_group_counts (
                app_id text NOT NULL,
                user_id text NOT NULL,
                group_key text NOT NULL,
                unread bigint NOT NULL,
                PRIMARY KEY (app_id, user_id, group_key)
            ) WITH (fillfactor = 50)
            """,
            "CREATE INDEX apps_counting_groups ON apps (app_id) WHERE badge_mode IN ('unreadGroups', 'unreadGroupsIncludingBroadcasts')",
            """
            CREATE FUNCTION count_unread_group_changes() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT EXISTS (SELECT 1 FROM apps WHERE badge_mode IN ('unreadGroups', 'unreadGroupsIncludingBroadcasts')) THEN
                    RETURN NULL;
                END IF;
                IF TG_OP = 'INSERT' THEN
                    INSERT INTO unread_group_counts AS g (app_id, user_id, group_key, unread)
                    SELECT n.app_id, n.user_id, coalesce(n.content ->> 'groupName', ''), count(*)
                    FROM new_rows n JOIN apps a ON a.app_id = n.app_id AND a.badge_mode IN ('unreadGroups', 'unreadGroupsIncludingBroadcasts')
                    WHERE n.read_state = 'unread' AND n.status = 'active'
                    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
                    ON CONFLICT (app_id, user_id, group_key) DO UPDATE SET unread = g.unread + EXCLUDED.unread;
                ELSIF TG_OP = 'UPDATE' THEN
                    INSERT INTO unread_group_counts AS g (app_id, user_id, group_key, unread)
                    SELECT d.app_id, d.user_id, d.group_key, sum(d.delta) FROM (
                        SELECT app_id, user_id, coalesce(content ->> 'groupName', '') AS group_key, 1 AS delta FROM new_rows
                        WHERE read_state = 'unread' AND status = 'active'
                        UNION ALL
                        SELECT app_id, user_id, coalesce(content ->> 'groupName', ''), -1 FROM old_rows
                        WHERE read_state = 'unread' AND status = 'active'
                    ) AS d JOIN apps a ON a.app_id = d.app_id AND a.badge_mode IN ('unreadGroups', 'unreadGroupsIncludingBroadcasts')
                    GROUP BY 1, 2, 3 HAVING sum(d.delta) <> 0 ORDER BY 1, 2, 3
                    ON CONFLICT (app_id, user_id, group_key) DO UPDATE SET unread = g.unread + EXCLUDED.unread;
                ELSE
                    UPDATE unread_group_counts AS g SET unread = g.unread - d.gone
                    FROM (SELECT app_id, user_id, coalesce(content ->> 'groupName', '') AS group_key, count(*) AS gone FROM old_rows
                          WHERE read_state = 'unread' AND status = 'active' GROUP BY 1, 2, 3) AS d
                    WHERE g.app_id = d.app_id AND g.user_id = d.user_id AND g.group_key = d.group_key;
                END IF;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER notifications_count_unread_groups_inserted AFTER INSERT ON notifications
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_unread_group_changes()
            """,
            """
            CREATE TRIGGER notifications_count_unread_groups_updated AFTER UPDATE ON notifications
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_unread_group_changes()
            """,
            """
            CREATE TRIGGER notifications_count_unread_groups_deleted AFTER DELETE ON notifications
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_unread_group_changes()
            """,
            """
            CREATE OR REPLACE FUNCTION user_states(p_apps text[], p_users text[])
            RETURNS TABLE (app_id text, user_id text, badge bigint, devices_version bigint)
            LANGUAGE plpgsql STABLE
            SET plan_cache_mode = force_generic_plan
            AS $$
            BEGIN
                RETURN QUERY
                SELECT u.app, u.usr,
                       (CASE WHEN a.badge_mode = 'none' THEN NULL ELSE
                           (CASE
                               WHEN a.badge_mode IN ('external', 'externalIncludingBroadcasts')
                                   THEN coalesce((SELECT e.badge FROM external_badges e WHERE e.app_id = u.app AND e.user_id = u.usr), 0)
                               WHEN a.badge_mode IN ('unreadGroups', 'unreadGroupsIncludingBroadcasts')
                                   THEN coalesce((SELECT sum(CASE WHEN g.group_key = '' THEN g.unread ELSE 1 END) FROM unread_group_counts g
                                                  WHERE g.app_id = u.app AND g.user_id = u.usr AND g.unread > 0), 0)
                               ELSE coalesce(c.unread, 0)
                           END)
                           + (CASE WHEN a.badge_mode IN ('unreadIncludingBroadcasts', 'unreadGroupsIncludingBroadcasts', 'externalIncludingBroadcasts')
                                  THEN unread_broadcasts(u.app, u.usr) ELSE 0 END)
                       END)::bigint,
                       coalesce(d.version, 0)::bigint
                FROM (SELECT DISTINCT t.app, t.usr FROM unnest(p_apps, p_users) AS t(app, usr)) u
                LEFT JOIN apps a ON a.app_id = u.app
                LEFT JOIN unread_counts c ON c.app_id = u.app AND c.user_id = u.usr
                LEFT JOIN device_versions d ON d.app_id = u.app AND d.user_id = u.usr;
            END
            $$
            """,
        ]),
        // Membership parameters (an object set on a join or an enrolment, per device) and a broadcast narrowed to the
        // members whose parameters hold every pair of its `where` (jsonb containment): it is in those members' feeds
        // only, and fanout pages through those members only.
        (35, [
            "ALTER TABLE event_source_members ADD COLUMN parameters jsonb",
            "ALTER TABLE broadcasts ADD COLUMN member_filter jsonb",
            """
            CREATE OR REPLACE FUNCTION user_broadcasts(p_app text, p_user text) RETURNS SETOF broadcasts LANGUAGE sql STABLE AS $$
                SELECT b.* FROM broadcasts b
                JOIN (SELECT m.event_source, min(m.joined_at) AS joined_at
                      FROM subscriptions s JOIN event_source_members m ON m.subscription_id = s.subscription_id
                      WHERE s.user_id = p_user AND s.app_id = p_app AND m.app_id = p_app
                      GROUP BY m.event_source) j ON j.event_source = b.event_source AND b.created_at >= j.joined_at
                WHERE b.app_id = p_app
                  AND (b.member_filter IS NULL OR EXISTS (
                      SELECT 1 FROM subscriptions s JOIN event_source_members m ON m.subscription_id = s.subscription_id
                      WHERE s.user_id = p_user AND s.app_id = p_app AND m.app_id = p_app AND m.event_source = b.event_source
                        AND m.joined_at <= b.created_at AND m.parameters @> b.member_filter))
            $$
            """,
        ]),
    ]

    /// Code run before a step's statements, for what SQL alone cannot do.
    private static let conversions: [Int: @Sendable (PostgresConnection, Logger) async throws -> Void] = [
        13: OutboxConversion.run,
    ]

    public func run() async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(7245001)", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            for step in Self.steps where !applied.contains(step.version) {
                try await Self.conversions[step.version]?(connection, logger)
                for statement in step.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO schema_migrations (version) VALUES (\(step.version))", logger: logger)
                logger.info("applied schema migration", metadata: ["version": "\(step.version)"])
            }
            let roleExists = try await connection.query("SELECT 1 FROM pg_roles WHERE rolname = \(readerRole)", logger: logger)
                .collect().count > 0
            if roleExists {
                let role = "\"" + readerRole.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                try await connection.query(PostgresQuery(unsafeSQL: "GRANT SELECT ON ALL TABLES IN SCHEMA public TO \(role)"), logger: logger)
            } else {
                logger.warning("the read-only role does not exist; readers must use a role of their own", metadata: ["role": "\(readerRole)"])
            }
        }
    }
}
