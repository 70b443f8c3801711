import Crypto
import Foundation
import Testing

@testable import NotifyWire

@Suite struct WireSchemaTests {
    /// Fails when a .proto changed and `Shared/NotifyWire/regenerate.sh` was not run.
    @Test func generatedCodeMatchesProtos() throws {
        let protos = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "../../Shared/NotifyWire/Protos").standardized
        let names = try FileManager.default.contentsOfDirectory(atPath: protos.path).filter { $0.hasSuffix(".proto") }.sorted()
        #expect(names == ["change_events.proto", "common.proto", "push_jobs.proto", "push_outcomes.proto", "storage_commands.proto", "webhooks.proto"])
        var all = Data()
        for name in names { all.append(try Data(contentsOf: protos.appending(path: name))) }
        let digest = SHA256.hash(data: all).map { String(format: "%02x", $0) }.joined()
        #expect(digest == WireSchemaDigest.protos, "the protos changed: run Shared/NotifyWire/regenerate.sh")
    }
}
