import Foundation
import NotifyTestSupport

/// The services' Prometheus metrics (`GET /metrics`), as an operator's scraper reads them.
enum Metrics {
    enum Service {
        case ingest, storage, fanout, pushDispatch
        /// An ingest a test runs beside the stack's (`SecondIngest`), at its base URL.
        case otherIngest(String)

        var url: String {
            let environment = ProcessInfo.processInfo.environment
            switch self {
            case .ingest: return Stack.ingestURL
            case .storage: return "http://127.0.0.1:\(environment["NOTIFY_STORAGE_HEALTH_PORT"] ?? "21081")"
            case .fanout: return "http://127.0.0.1:\(environment["NOTIFY_FANOUT_HEALTH_PORT"] ?? "21082")"
            case .pushDispatch: return "http://127.0.0.1:\(environment["NOTIFY_DISPATCH_HEALTH_PORT"] ?? "21083")"
            case .otherIngest(let baseURL): return baseURL
            }
        }
    }

    /// The service's whole exposition text.
    static func text(of service: Service) async throws -> String {
        let answer = try await StackClient.send(.GET, "\(service.url)/metrics")
        guard answer.status == 200 else { throw TestFailure("GET /metrics answered \(answer.status): \(answer.text)") }
        return answer.text
    }

    /// The value of the sample `name{labels...}` (other labels may be present too); 0 if there is none yet.
    static func value(_ name: String, labels: [String: String] = [:], service: Service) async throws -> Double {
        let wanted = labels.map { "\($0.key)=\"\($0.value)\"" }
        for line in try await text(of: service).split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard wanted.allSatisfy({ line.contains($0) }), let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            return value
        }
        return 0
    }
}
