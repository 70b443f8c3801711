-- Database and roles of the notify service.
--
-- Run by the postgres image on a fresh volume (docker-compose.yml mounts it
-- into /docker-entrypoint-initdb.d/) and by deploy/local/postgres.sh on every
-- start, so it must stay idempotent. It is a psql script (\gexec).
--
--   notify_writer  owns database "notify"; the storage service (the only
--                  writer) connects as it and runs the migrations.
--   notify_reader  may connect; the storage migrations grant it SELECT on
--                  what ingest, fanout and push-dispatch read.

SELECT 'CREATE ROLE notify_writer'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'notify_writer') \gexec
ALTER ROLE notify_writer LOGIN PASSWORD 'notify_writer';

SELECT 'CREATE ROLE notify_reader'
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'notify_reader') \gexec
ALTER ROLE notify_reader LOGIN PASSWORD 'notify_reader';

SELECT 'CREATE DATABASE notify OWNER notify_writer ENCODING ''UTF8'' TEMPLATE template0'
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'notify') \gexec
ALTER DATABASE notify OWNER TO notify_writer;
GRANT CONNECT ON DATABASE notify TO notify_reader;
