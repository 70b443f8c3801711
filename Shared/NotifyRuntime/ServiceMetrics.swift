import Hummingbird
import Metrics
import Prometheus

/// The process's swift-metrics backend: a Prometheus registry, rendered at `GET /metrics` in the text format.
///
/// Services count with swift-metrics (`Counter(label:dimensions:)`, `Timer`) and never touch the registry;
/// what they name `notify_*` is what an operator scrapes and alerts on.
public struct ServiceMetrics: Sendable {
    public let registry: PrometheusCollectorRegistry

    /// An empty registry of its own, not the process's backend (that is `bootstrap()`'s): what a service built in a
    /// test renders at `GET /metrics`.
    public init() {
        registry = PrometheusCollectorRegistry()
    }

    /// Bootstraps swift-metrics once per process (`ServiceCommand` does, before it builds the service), as
    /// `LogSettings.bootstrap(label:)` does for logs.
    public static func bootstrap() -> ServiceMetrics {
        let metrics = ServiceMetrics()
        var factory = PrometheusMetricsFactory(registry: metrics.registry)
        // Libraries name metrics the OpenTelemetry way (`http.server.request.duration`); Prometheus allows no dots.
        factory.nameAndLabelSanitizer = { label, dimensions in
            (prometheusName(label), dimensions.map { (prometheusName($0.0), $0.1) })
        }
        // From a publish to its push accepted: milliseconds when idle, seconds under a backlog, minutes through retries.
        factory.durationHistogramBuckets["notify_delivery_latency_seconds"] = [
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60), .seconds(300),
        ]
        MetricsSystem.bootstrap(factory)
        return metrics
    }

    /// `name` with every character Prometheus does not allow in a name replaced by `_`.
    static func prometheusName(_ name: String) -> String {
        String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == ":"
                ? scalar : "_"
        }))
    }

    /// Adds `GET /metrics` to `router`.
    public func addRoute<Context: RequestContext>(to router: Router<Context>) {
        router.get("/metrics") { _, _ -> Response in
            var buffer: [UInt8] = []
            buffer.reserveCapacity(8 * 1024)
            registry.emit(into: &buffer)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
        }
    }
}
