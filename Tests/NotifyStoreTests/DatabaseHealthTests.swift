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
}
