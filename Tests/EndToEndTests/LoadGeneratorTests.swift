import Foundation
import NotifyTestSupport
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
            var amqpReplies: Replies?

            struct Replies: Decodable {
                var answered: Int
                var byStatus: [String: Int]
            }

            struct CPU: Decodable {
                var unit: String
                var shares: [Share]
            }

            struct Share: Decodable {
                var process: String
                var cpuMilliseconds: Double
                var contextSwitchesPerUnit: Double?
            }
        }

        /// The report of `loadgen fanout`, as far as this test reads it.
        private struct FanoutReport: Decodable {
            var settings: [String: String]
            var figures: [Figure]
            var cpu: Report.CPU

            struct Figure: Decodable {
                var name: String
                var value: Double
            }
        }

        /// A loadgen process started with `arguments` (its output discarded).
        private struct RunningLoadgen {
            let process = Process()
            private let exits: AsyncStream<Int32>

            init(_ arguments: [String]) throws {
                process.executableURL = URL(fileURLWithPath: Stack.root + "/.build/debug/loadgen")
                process.arguments = arguments
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                let (exits, reportExit) = AsyncStream.makeStream(of: Int32.self)
                self.exits = exits
                process.terminationHandler = { process in
                    reportExit.yield(process.terminationStatus)
                    reportExit.finish()
                }
                try process.run()
            }

            /// Waits for the process to exit and returns its status.
            func exitStatus() async -> Int32 {
                var status: Int32 = -1
                for await code in exits { status = code }
                return status
            }
        }

        /// Messages ready in `queue`, as the broker counts them (`rabbitmqctl list_queues`).
        private static func readyMessages(in queue: String) async throws -> Int? {
            let result = try await Scripts.run("rabbitmqctl.sh", ["list_queues", "-q", "-p", Broker.virtualHost, "name", "messages_ready"])
            guard result.status == 0 else { throw TestFailure("rabbitmqctl list_queues failed (\(result.status)): \(result.output)") }
            for line in result.output.split(separator: "\n") {
                let fields = line.split(whereSeparator: \.isWhitespace)
                if fields.count == 2, fields[0] == queue { return Int(fields[1]) }
            }
            return nil
        }

        private static func temporaryOutput() -> String {
            FileManager.default.temporaryDirectory.appendingPathComponent("loadgen-\(uniqueSuffix())").path
        }

        @Test("a short run loses and duplicates nothing and writes its reports", .timeLimit(.minutes(5)))
        func shortRun() async throws {
            let output = Self.temporaryOutput()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let status = try await RunningLoadgen([
                "http", "--stats-settle", "0", "--ingest-url", Stack.ingestURL, "--sandbox-url", Stack.sandboxURL, "--sandbox-apns-url", Stack.sandboxAPNsURL,
                "--users", "20", "--devices", "3", "--count", "300", "--batch", "10", "--concurrency", "8",
                "--duration-limit", "120", "--drain-timeout", "120", "--apns-key-file", "", "--output", output,
            ]).exitStatus()

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
            let switches = Dictionary(uniqueKeysWithValues: report.cpu.shares.map { ($0.process, $0.contextSwitchesPerUnit ?? 0) })
            for process in ["ingest", "storage", "fanout", "push-dispatch", "rabbitmq", "postgres"] {
                #expect((busy[process] ?? 0) > 0, "the report says how much CPU \(process) used")
                #expect((switches[process] ?? 0) > 0, "the report says how often \(process)'s threads switched")
            }
        }

        @Test("the wakeup mode times a thread waking another on the same CPU and on another, back to back and after a pause",
              .timeLimit(.minutes(2)))
        func wakeup() async throws {
            struct WakeupReport: Decodable {
                var figures: [FanoutReport.Figure]
            }
            let output = Self.temporaryOutput()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let status = try await RunningLoadgen(["wakeup", "--round-trips", "2000", "--pause-microseconds", "200", "--output", output]).exitStatus()

            #expect(status == 0)
            let report = try JSONDecoder().decode(WakeupReport.self, from: Data(contentsOf: URL(fileURLWithPath: "\(output)/report.json")))
            let figures = Dictionary(report.figures.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            var cases = ["same CPU, back to back", "same CPU, after a pause"]
            if ProcessInfo.processInfo.activeProcessorCount > 1 { cases += ["other CPU, back to back", "other CPU, after a pause"] }
            for name in cases {
                #expect((figures["\(name): CPU per round trip (two wake-ups)"] ?? 0) > 0, "\(name): CPU reported")
                #expect((figures["\(name): wall time per round trip"] ?? 0) > 0, "\(name): wall time reported")
            }
            #expect((figures["same CPU, after a pause: wall time per round trip"] ?? 0) >= 200, "each round trip after a pause waits it out")
        }

        @Test("the broker mode measures the ceiling, then single messages at a paced rate with RabbitMQ's CPU per message",
              .timeLimit(.minutes(5)))
        func brokerPaced() async throws {
            struct BrokerReport: Decodable {
                var figures: [FanoutReport.Figure]
            }
            let output = Self.temporaryOutput()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let status = try await RunningLoadgen([
                "broker", "--amqp-url", Stack.amqpURL, "--messages", "1000", "--batch", "100", "--paced-rate", "100", "--paced-seconds", "2",
                "--output", output,
            ]).exitStatus()

            #expect(status == 0)
            let report = try JSONDecoder().decode(BrokerReport.self, from: Data(contentsOf: URL(fileURLWithPath: "\(output)/report.json")))
            let figures = Dictionary(report.figures.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
            let pacedRate = figures["paced: messages/s (each published and confirmed alone)"] ?? 0
            #expect(pacedRate > 50 && pacedRate <= 110, "200 messages at 100/s, one at a time (\(pacedRate)/s)")
            #expect((figures["paced: RabbitMQ CPU per message (published, confirmed, delivered, acked)"] ?? 0) > 0, "the broker's CPU per message is reported")
            #expect((figures["publish and consume at once"] ?? 0) > 0)
        }

        @Test("over AMQP it publishes as the app's own broker user, one notification per message, and counts every verdict on its reply queue",
              .timeLimit(.minutes(5)))
        func amqpRunAsAppUser() async throws {
            let output = Self.temporaryOutput()
            defer { try? FileManager.default.removeItem(atPath: output) }
            let status = try await RunningLoadgen([
                "http", "--stats-settle", "0", "--transport", "amqp", "--amqp-url", Stack.amqpURL, "--ingest-url", Stack.ingestURL, "--sandbox-url", Stack.sandboxURL,
                "--sandbox-apns-url", Stack.sandboxAPNsURL, "--users", "10", "--devices", "2", "--count", "100", "--batch", "1",
                "--concurrency", "8", "--duration-limit", "120", "--drain-timeout", "120", "--apns-key-file", "", "--output", output,
            ]).exitStatus()

            #expect(status == 0, "loadgen exits 0 when nothing was lost")
            let report = try JSONDecoder().decode(Report.self, from: Data(contentsOf: URL(fileURLWithPath: "\(output)/report.json")))
            #expect(report.accepted == 100)
            #expect(report.deliveredPushes == 200)
            #expect(report.lost == 0)
            #expect(report.amqpReplies?.answered == 100)
            #expect(report.amqpReplies?.byStatus == ["202": 100])
        }

        @Test("the fan-out mode preloads change events while the worker is stopped, then counts every job it makes once started",
              .timeLimit(.minutes(5)))
        func fanoutPreloaded() async throws {
            let output = Self.temporaryOutput()
            let ready = output + ".ready"
            defer {
                try? FileManager.default.removeItem(atPath: output)
                try? FileManager.default.removeItem(atPath: ready)
            }
            // What earlier tests published is through storage and fanout first: a change batch of theirs arriving while
            // fanout is stopped would wait on fanout.changes beside the preload.
            let settled = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < settled {
                let storage = try await Self.readyMessages(in: "storage.commands") ?? 0
                let changes = try await Self.readyMessages(in: "fanout.changes") ?? 0
                if storage == 0 && changes == 0 { break }
                try await Task.sleep(for: .milliseconds(500))
            }
            try await Task.sleep(for: .seconds(1))
            try await Services.restoringAll {
                try await Services.control("stop", ["push-dispatch", "fanout"])
                let loadgen = try RunningLoadgen([
                    "fanout", "--amqp-url", Stack.amqpURL, "--database-url", Stack.writerDatabaseURL, "--users", "20", "--devices", "3",
                    "--events", "200", "--events-per-message", "50", "--preload", "--ready-file", ready, "--timeout", "120",
                    "--output", output,
                ])
                let deadline = ContinuousClock.now + .seconds(120)
                while !FileManager.default.fileExists(atPath: ready) && loadgen.process.isRunning && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(FileManager.default.fileExists(atPath: ready), "loadgen says when every change event is on the queue")
                // The broker publishes its queue counts every few seconds: wait for them to show the preload.
                var waiting = try await Self.readyMessages(in: "fanout.changes")
                while waiting != 4 && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(500))
                    waiting = try await Self.readyMessages(in: "fanout.changes")
                }
                #expect(waiting == 4, "the 200 events wait on the queue, 50 to a message (the broker counts \(waiting.map(String.init) ?? "none"))")
                try await Services.control("start", ["fanout"])
                if !FileManager.default.fileExists(atPath: ready) { loadgen.process.terminate() }
                let status = await loadgen.exitStatus()

                #expect(status == 0, "every push job arrived")
                let report = try JSONDecoder().decode(FanoutReport.self, from: Data(contentsOf: URL(fileURLWithPath: "\(output)/report.json")))
                #expect(report.settings["preload"] == "true")
                #expect(report.figures.first { $0.name == "push jobs" }?.value == 600, "200 events to users of 3 devices make 600 jobs")
                let fanoutCPU = report.cpu.shares.first { $0.process == "fanout" }?.cpuMilliseconds ?? 0
                #expect(fanoutCPU > 0, "the worker started after the preload is counted in the CPU figures")
            }
        }
    }
}
