-- deploy/postgres/init.sql for CloudNativePG (./postgres.yaml): run once, by the superuser, in database notify, after
-- initdb made the database and its owner notify_writer. One multi-statement string: plain SQL, no psql commands.
-- notify_reader's password is set by the operator from the Secret postgres-reader (managed roles).
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'notify_reader') THEN
        CREATE ROLE notify_reader LOGIN;
    END IF;
END
$$;
GRANT CONNECT ON DATABASE notify TO notify_reader;
