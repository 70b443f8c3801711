import Logging
import NotifyDatabase
import NotifyModels
import PostgresNIO
import ServiceLifecycle

/// Keeps `AppDirectory`'s cached apps fresh: listens on `AppRecord.changedChannel`, where PostgreSQL announces (at
/// commit) every change of an app's row or broker users, and drops that app's copy. A rate limit, badge mode, key or
/// deletion changed through any instance then holds on this one for the next request. While the listening connection
/// is down, copies live out the directory's lifetime; each time listening begins again every copy is dropped.
struct AppChangeWatch: Service {
    let client: PostgresClient
    let apps: AppDirectory
    let logger: Logger

    /// Listens until shutdown, connecting again (after a pause) whenever the connection drops.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            await client.listen(on: AppRecord.changedChannel) {
                apps.forgetAll()
            } received: { appId in
                apps.forget(appId)
            } stopped: { error in
                if let error { logger.warning("not listening for app changes; cached apps live out their lifetime", metadata: ["error": "\(String(reflecting: error))"]) }
            }
        }
    }
}
