import Logging
import PostgresNIO

/// The schema, versioned; storage applies what is missing at start-up under an advisory lock,
/// so several storage instances may start at once.
struct Migrations {
    let client: PostgresClient
    let readerRole: String
    let logger: Logger

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
    ]

    func run() async throws {
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
