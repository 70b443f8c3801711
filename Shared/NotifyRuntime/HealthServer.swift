import Hummingbird
import Logging
import ServiceLifecycle

/// `GET /health` and `GET /metrics` for services whose only HTTP is operational: health answers 200 when
/// every check passes, else 503, with `{"status": "ok"|"unavailable", "checks": {"name": true|false}}`.
public struct HealthServer: Service {
    /// A named check, e.g. "amqp" → the publisher is connected.
    public typealias Check = @Sendable () async -> Bool

    private let application: Application<RouterResponder<BasicRequestContext>>

    public init(host: String, port: Int, checks: [String: Check], metrics: ServiceMetrics, logger: Logger) {
        let router = Router()
        router.get("/health") { _, _ -> Response in
            try await HealthReport.response(checks)
        }
        metrics.addRoute(to: router)
        application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "notify"),
            logger: logger
        )
    }

    public func run() async throws {
        try await application.run()
    }
}

/// Renders health checks as a JSON response; shared by the health server and ingest's API.
public enum HealthReport {
    public static func response(_ checks: [String: HealthServer.Check]) async throws -> Response {
        var results: [String: Bool] = [:]
        for (name, check) in checks {
            results[name] = await check()
        }
        let healthy = results.values.allSatisfy { $0 }
        let body = "{\"status\":\"\(healthy ? "ok" : "unavailable")\",\"checks\":{"
            + results.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}}"
        return Response(
            status: healthy ? .ok : .serviceUnavailable,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}
