import Logging
import NotifyStore
import ServiceLifecycle

/// Runs the migrations (retrying while the database is not reachable yet), then the services that need
/// the schema, side by side.
struct MigrationGate: Service {
    let migrations: Migrations
    let then: [any Service]
    let logger: Logger

    func run() async throws {
        var attempt = 0
        while true {
            do {
                try await migrations.run()
                break
            } catch {
                attempt += 1
                if attempt >= 30 || Task.isShuttingDownGracefully { throw error }
                logger.warning("migrations failed; retrying", metadata: ["error": "\(String(reflecting: error))"])
                try await Task.sleep(for: .seconds(1))
            }
        }
        try await withThrowingDiscardingTaskGroup { group in
            for service in then {
                group.addTask { try await service.run() }
            }
        }
    }
}
