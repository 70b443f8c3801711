import Foundation
import NotifyDatabase
import NotifyStore
import Testing

/// The services' database health probe: true while PostgreSQL answers, false within its two seconds when nothing does.
struct DatabaseHealthTests {
    @Test(
        "the probe answers true while the database answers",
        .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
    func answeringDatabase() async throws {
        try await NotifyStoreTestDatabase.withDatabase { client, _ in
            #expect(await DatabaseHealth(client: client, logger: NotifyStoreTestDatabase.logger).check())
        }
    }

    @Test("the probe answers false when no server listens")
    func silentDatabase() async throws {
        // Port 1 of the loopback: nothing listens there, connecting is refused.
        let logger = NotifyStoreTestDatabase.logger
        let client = try DatabaseURL.makeClient("postgres://notify_writer@127.0.0.1:1/notify", logger: logger)
        let running = Task { await client.run() }
        defer { running.cancel() }
        #expect(await DatabaseHealth(client: client, logger: logger).check() == false)
    }

    @Test(
        "a new connection finds a primary through the writer's URL, and none through the standby's or a closed port",
        .enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_REPLICA_DATABASE_URL"] != nil, "needs the test stack's standby: run deploy/local/test.sh"))
    func acceptsWrites() async throws {
        let environment = ProcessInfo.processInfo.environment
        let logger = NotifyStoreTestDatabase.logger
        let primary = try DatabaseURL.connectionConfiguration(try #require(environment["NOTIFY_WRITER_DATABASE_URL"]))
        let standby = try DatabaseURL.connectionConfiguration(try #require(environment["NOTIFY_TEST_REPLICA_DATABASE_URL"]))
        #expect(await DatabaseHealth.acceptsWrites(primary, logger: logger))
        #expect(await DatabaseHealth.acceptsWrites(standby, logger: logger) == false)
        #expect(await DatabaseHealth.acceptsWrites(try DatabaseURL.connectionConfiguration("postgres://notify_writer@127.0.0.1:1/notify"), logger: logger) == false)
    }
}
