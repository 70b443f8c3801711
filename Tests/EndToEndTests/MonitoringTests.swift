import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// deploy/monitoring against the running stack: promtool checks the Prometheus configuration and the alert rules,
    /// then a real Prometheus scrapes the stack, evaluates every rule, and answers every query of the dashboard.
    @Suite("monitoring: the alert rules and the dashboard's queries")
    struct MonitoringTests {
        private static let environment = ProcessInfo.processInfo.environment
        /// Where Debian's prometheus and promtool are (deploy/local/prometheus-tools.sh, run by test.sh).
        private static let tools = environment["NOTIFY_PROMETHEUS_BIN"] ?? ""
        private static let monitoring = Stack.root + "/deploy/monitoring"

        @discardableResult
        private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, output)
        }

        @Test("promtool accepts the Prometheus configuration and the alert rules")
        func promtoolChecks() throws {
            let config = try Self.run(Self.tools + "/promtool", ["check", "config", Self.monitoring + "/prometheus.yml"])
            #expect(config.status == 0, "\(config.output)")
            let rules = try Self.run(Self.tools + "/promtool", ["check", "rules", Self.monitoring + "/alerts.yml"])
            #expect(rules.status == 0, "\(rules.output)")
        }

        @Test("a Prometheus scraping the stack loads every rule healthy and answers every dashboard query, with data where the stack has it",
              .timeLimit(.minutes(2)))
        func dashboardQueriesRun() async throws {
            let port = Int(Self.environment["NOTIFY_TEST_PROMETHEUS_PORT"] ?? "") ?? 22095
            let directory = FileManager.default.temporaryDirectory.appending(path: "notify-prometheus-\(uniqueSuffix())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            func local(_ name: String, _ fallback: Int) -> String { "127.0.0.1:\(Self.environment[name] ?? String(fallback))" }
            // The compose file's scrape jobs, pointed at this stack's ports.
            let config = """
                global: {scrape_interval: 1s, evaluation_interval: 1s}
                rule_files: ["\(Self.monitoring)/alerts.yml"]
                scrape_configs:
                  - job_name: notify
                    static_configs:
                      - {targets: ["\(local("NOTIFY_INGEST_PORT", 22080))"], labels: {service: ingest}}
                      - {targets: ["\(local("NOTIFY_STORAGE_HEALTH_PORT", 22081))"], labels: {service: storage}}
                      - {targets: ["\(local("NOTIFY_FANOUT_HEALTH_PORT", 22082))"], labels: {service: fanout}}
                      - {targets: ["\(local("NOTIFY_DISPATCH_HEALTH_PORT", 22083))"], labels: {service: push-dispatch}}
                  - job_name: rabbitmq
                    metrics_path: /metrics/per-object
                    static_configs:
                      - targets: ["\(local("NOTIFY_RABBITMQ_PROMETHEUS_PORT", 22692))"]
                """
            try config.write(to: directory.appending(path: "prometheus.yml"), atomically: true, encoding: .utf8)
            let prometheus = Process()
            prometheus.executableURL = URL(fileURLWithPath: Self.tools + "/prometheus")
            prometheus.arguments = [
                "--config.file=\(directory.path)/prometheus.yml", "--storage.tsdb.path=\(directory.path)/data",
                "--web.listen-address=127.0.0.1:\(port)", "--log.level=warn",
            ]
            prometheus.standardOutput = FileHandle.nullDevice
            prometheus.standardError = FileHandle.nullDevice
            try prometheus.run()
            defer {
                prometheus.terminate()
                prometheus.waitUntilExit()
            }
            // Something to count: a push accepted by the sandbox.
            let app = try await TestApp.create()
            let user = "watched-\(uniqueSuffix())"
            let token = try await app.registerDevice(of: user)
            _ = try await app.publishAccepted(.alert(to: user))
            _ = try await Sandbox.waitForDeliveries(to: token) { !$0.isEmpty }

            let api = "http://127.0.0.1:\(port)/api/v1"
            func query(_ expression: String) async throws -> (status: String, series: Int) {
                let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
                let answer = try await StackClient.send(.GET, "\(api)/query?query=\(encoded)")
                let body = try JSONValue.parse(answer.text)
                return (body["status"]?.stringValue ?? "?", body["data"]?["result"]?.arrayValue?.count ?? 0)
            }
            // Every service and the broker scraped, and the pushes counted.
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let up = try? await query(#"sum(up) == 5 and sum(notify_pushes_total{result="accepted"}) > 0"#)
                if up?.series == 1 { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(try await query(#"up == 1"#).series == 5, "every target up")

            let dashboard = try JSONValue.parse(try String(contentsOfFile: Self.monitoring + "/grafana/dashboards/notify.json", encoding: .utf8))
            let expressions = (dashboard["panels"]?.arrayValue ?? []).flatMap { ($0["targets"]?.arrayValue ?? []).compactMap { $0["expr"]?.stringValue } }
            #expect(expressions.count >= 14)
            for expression in expressions {
                // Counted, so that a query of many series answers in a few bytes.
                let answer = try await query("count(\(expression))")
                #expect(answer.status == "success", "the dashboard's query \(expression)")
            }
            // The series the stack has by now: each must be found by the name the dashboard and the rules use.
            for expression in [
                #"notify_pushes_total{result="accepted"}"#, "notify_push_jobs_total", "notify_delivery_latency_seconds_bucket",
                "notify_push_duration_seconds_bucket", "notify_amqp_messages_total", "rabbitmq_queue_messages_ready",
                "rabbitmq_queue_messages_unacked", "http_server_request_duration_count",
                #"http_server_request_duration_count{http_route=~"/v1/apps/.*/notifications", http_response_status_code="202"}"#,
            ] {
                #expect(try await query("count(\(expression))").series == 1, "no series for \(expression)")
            }
            // Every rule loaded and evaluated without error.
            let rules = try JSONValue.parse(try await StackClient.send(.GET, "\(api)/rules").text)
            let loaded = (rules["data"]?["groups"]?.arrayValue ?? []).flatMap { $0["rules"]?.arrayValue ?? [] }
            #expect(loaded.count >= 8)
            for rule in loaded {
                #expect(rule["health"]?.stringValue == "ok", "rule \(rule["name"]?.stringValue ?? "?"): \(rule["lastError"]?.stringValue ?? "")")
            }
        }
    }
}
