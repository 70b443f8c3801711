import Foundation
import Testing

extension EndToEndTests {
    @Suite("the load generator")
    struct LoadGeneratorTests {
        /// The report loadgen writes, as far as this test reads it.
        private struct Report: Decodable {
            var accepted: Int
            var expectedPushes: Int
            var deliveredPushes: Int
            var lost: Int
            var duplicated: Int
            var cpu: CPU

            struct CPU: Decodable {
                var unit: String
                var shares: [Share]
            }

            struct Share: Decodable {
                var process: String
                var cpuMilliseconds: Double
            }
        }

        @Test("a short run loses and duplicates nothing and writes its reports", .timeLimit(.minutes(5)))
        func shortRun() async throws {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("loadgen-\(uniqueSuffix())").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Stack.root + "/.build/debug/loadgen")
            process.arguments = [
                "http", "--ingest-url", Stack.ingestURL, "--sandbox-url", Stack.sandboxURL, "--sandbox-apns-url", Stack.sandboxAPNsURL,
                "--users", "20", "--devices", "3", "--count", "300", "--batch", "10", "--concurrency", "8",
                "--duration-limit", "120", "--drain-timeout", "120", "--apns-key-file", "", "--output", output,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let (exits, reportExit) = AsyncStream.makeStream(of: Int32.self)
            process.terminationHandler = { process in
                reportExit.yield(process.terminationStatus)
                reportExit.finish()
            }
            try process.run()
            var status: Int32 = -1
            for await code in exits { status = code }

            #expect(status == 0, "loadgen exits 0 when nothing was lost")
            for file in ["report.json", "report.md", "latency.svg"] {
                #expect(FileManager.default.fileExists(atPath: "\(output)/\(file)"), "\(file) was written")
            }
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: "\(output)/report.json")))
            #expect(report.accepted == 300)
            #expect(report.expectedPushes == 900)
            #expect(report.deliveredPushes == 900)
            #expect(report.lost == 0)
            #expect(report.duplicated == 0)
            let busy = Dictionary(uniqueKeysWithValues: report.cpu.shares.map { ($0.process, $0.cpuMilliseconds) })
            #expect(report.cpu.unit == "notification")
            for process in ["ingest", "storage", "fanout", "push-dispatch", "rabbitmq", "postgres"] {
                #expect((busy[process] ?? 0) > 0, "the report says how much CPU \(process) used")
            }
        }
    }
}
