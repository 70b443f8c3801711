import Foundation
import NotifyModels
import Testing

@Suite("storage command messages")
struct StorageCommandBatchTests {
    @Test("commands are framed in order, at most 500 to a message, and decode back unchanged")
    func commandsAreFramedInOrder() throws {
        let commands = (0..<1201).map { index in
            StorageCommand(
                issuedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)),
                action: .unregisterSubscription(appId: "app", userId: "user-\(index)", subscriptionId: UUID()))
        }
        let bodies = try StorageCommandBatch.bodies(for: commands)
        let decoded = try bodies.map { try WireCoding.makeDecoder().decode(StorageCommandBatch.self, from: $0).commands }
        #expect(decoded.map(\.count) == [500, 500, 201])
        #expect(decoded.flatMap { $0 } == commands)
        #expect(try StorageCommandBatch.bodies(for: []).isEmpty)
    }
}
