import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    /// The README's Go example of publishing over AMQP, built with Debian's Go and its packaged amqp091-go and uuid
    /// sources (deploy/local/install-deps.sh installs them), nothing downloaded.
    @Suite("the README's Go AMQP example")
    struct GoAMQPExampleTests {
        /// The path of the Go example the README links to after naming amqp091-go.
        static func goExample(in readme: String) -> String? {
            guard let named = readme.range(of: "amqp091-go") else { return nil }
            let link = /\]\(([^)\s]+\.go)\)/
            return readme[named.upperBound...].firstMatch(of: link).map { String($0.output.1) }
        }

        @Test("the Go example the README links to builds offline, publishes with an app's broker credentials, is answered 202, and the notification reaches the device")
        func goExamplePublishes() async throws {
            let readme = try String(contentsOfFile: "\(Stack.root)/README.md", encoding: .utf8)
            let example = try #require(Self.goExample(in: readme), "README.md links no Go example after naming amqp091-go")
            let go = try #require(
                ["/usr/bin/go", "/usr/lib/go/bin/go"].first { FileManager.default.isExecutableFile(atPath: $0) },
                "no go: deploy/local/install-deps.sh installs golang-go")
            let work = FileManager.default.temporaryDirectory.appendingPathComponent("go-example-\(uniqueSuffix())").path
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            try FileManager.default.copyItem(atPath: "\(Stack.root)/\(example)", toPath: "\(work)/publish.go")

            // GOPATH mode over Debian's packaged sources (/usr/share/gocode/src): no module, no proxy, no toolchain fetched.
            let state = ProcessInfo.processInfo.environment["NOTIFY_STATE_DIR"] ?? work
            let goEnvironment = [
                "GO111MODULE": "off", "GOPATH": "/usr/share/gocode", "GOCACHE": "\(state)/go-build-cache", "GOFLAGS": "", "GOPROXY": "off",
                "GOTOOLCHAIN": "local",
            ]
            let build = try await Scripts.runProgram(go, ["build", "-o", "\(work)/publish", "\(work)/publish.go"], environment: goEnvironment)
            try #require(build.status == 0, "go build \(example): \(build.output)")

            let app = try await TestApp.create(brokerAccess: true)
            let credentials = try #require(app.broker)
            let user = "user-\(uniqueSuffix())"
            let device = try await app.registerDevice(of: user)
            let run = try await Scripts.runProgram("\(work)/publish", [], environment: [
                "NOTIFY_AMQP_URL": try Broker.url(user: credentials.user, password: credentials.password), "NOTIFY_APP_ID": app.appId,
                "NOTIFY_USER_ID": user,
            ])
            #expect(run.status == 0, "\(example): \(run.output)")
            let verdict = try JSONValue.parse(run.output)
            #expect(verdict["status"]?.intValue == 202, "\(run.output)")
            let id = try #require(verdict["body"]?["id"]?.stringValue, "\(example) printed no id: \(run.output)")
            #expect(try await Sandbox.missingNotifications([id.lowercased()], at: device).isEmpty, "the notification reached the device")
            _ = try? await StackClient.send(.DELETE, "\(Stack.ingestURL)/v1/apps/\(app.appId)", bearer: Stack.adminToken)
        }
    }
}
