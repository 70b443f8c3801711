import Foundation

/// A fault scripted at the provider sandbox (`POST /faults`): how it answers pushes to one device token of one provider.
struct SandboxFault: Encodable {
    var provider = "apns"
    let token: String
    var status: Int?
    var reason: String?
    var retryAfter: Int?
    var delayMilliseconds: Int?
    var dropConnection: Bool?
    /// How many pushes it answers; nil = every push until the faults are removed.
    var times: Int?

    /// Adds the fault; nil when the sandbox took it, else why not.
    func add(client: JSONClient, sandboxURL: String) async -> String? {
        do {
            let answer = try await client.send(.POST, "\(sandboxURL)/faults", body: try JSONEncoder().encode(self))
            return answer.status == 201 ? nil : "the sandbox answered \(answer.status) to a fault"
        } catch {
            return "the sandbox did not take a fault: \(error)"
        }
    }

    /// Removes every fault scripted at the sandbox.
    static func removeAll(client: JSONClient, sandboxURL: String) async throws {
        let answer = try await client.send(.DELETE, "\(sandboxURL)/faults")
        guard answer.status == 204 else { throw LoadGenError("DELETE \(sandboxURL)/faults answered \(answer.status)") }
    }
}
