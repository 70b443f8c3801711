import Foundation
import NotifyModels
import NotifyTestSupport
import Testing

extension EndToEndTests {
    /// One notification followed through the logs as the README says: the services run with `LOG_LEVEL=debug
    /// LOG_FORMAT=json`, and its id is found with `grep -h '"notificationId":"<id>"' <state>/logs/*.log`.
    @Suite("a notification followed through the services' logs")
    struct LogTrailTests {
        /// `services.sh restart` of the four services with `environment` over the test's own.
        private static func restartPipeline(_ environment: [String: String] = [:]) async throws {
            let result = try await Scripts.runProgram(
                "\(Stack.scriptsDirectory)/services.sh", ["restart"] + Services.pipeline, environment: environment)
            guard result.status == 0 else { throw TestFailure("services.sh restart failed (\(result.status)):\n\(result.output)") }
        }

        /// The lines a service's log gained after byte `offset`.
        private static func lines(of service: String, after offset: UInt64) throws -> [Substring] {
            let state = try #require(ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"], "NOTIFY_STATE_DIR is set by deploy/local/test.sh")
            let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "\(state)/logs/\(service).log"))
            defer { try? file.close() }
            try file.seek(toOffset: offset)
            return String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self).split(separator: "\n")
        }

        private static func size(of service: String) -> UInt64 {
            let state = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"] ?? ""
            let attributes = try? FileManager.default.attributesOfItem(atPath: "\(state)/logs/\(service).log")
            return (attributes?[.size] as? NSNumber)?.uint64Value ?? 0
        }

        @Test("with LOG_LEVEL=debug LOG_FORMAT=json, one notification's id is in ingest's, storage's, fanout's and push-dispatch's logs, on JSON lines naming the service",
              .timeLimit(.minutes(3)))
        func notificationIdInEveryServiceLog() async throws {
            try await Self.restartPipeline(["LOG_LEVEL": "debug", "LOG_FORMAT": "json"])
            let outcome: Result<Void, any Error>
            do {
                let offsets = Dictionary(uniqueKeysWithValues: Services.pipeline.map { ($0, Self.size(of: $0)) })
                let app = try await TestApp.create()
                let user = "user-\(uniqueSuffix())"
                let device = try await app.registerDevice(of: user)
                let id = try await app.publishAccepted(.alert(to: user))
                #expect(try await Sandbox.missingNotifications([id], at: device).isEmpty, "the notification reached the device")

                // push-dispatch logs the answer after the push arrived: the lines are awaited a little.
                let needle = #""notificationId":"\#(id)""#
                var found: [String: [Substring]] = [:]
                let deadline = ContinuousClock.now + .seconds(10)
                repeat {
                    for service in Services.pipeline {
                        found[service] = try Self.lines(of: service, after: offsets[service] ?? 0).filter { $0.contains(needle) }
                    }
                    if found.values.allSatisfy({ !$0.isEmpty }) { break }
                    try await Task.sleep(for: .milliseconds(200))
                } while ContinuousClock.now < deadline
                for service in Services.pipeline {
                    let lines = found[service] ?? []
                    #expect(!lines.isEmpty, "\(service).log has no line with \(needle)")
                    for line in lines {
                        let entry = try JSONValue.parse(String(line))
                        #expect(entry["service"]?.stringValue == service && entry["notificationId"]?.stringValue == id, "\(line)")
                    }
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            // Back to the level and format the stack runs with.
            try await Self.restartPipeline()
            try outcome.get()
        }
    }
}
