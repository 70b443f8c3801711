import Foundation
import Logging
import NotifyBrokerAdmin
import NotifyModels
import NotifyStore
import NotifyStoreTesting
import NotifyTestSupport
import Synchronization
import Testing

@testable import StorageCore

/// `BrokerUserProvisioner` against a database of its own on the test stack's PostgreSQL (the stack's storage runs its
/// own provisioner on the shared one), with a broker administration that records what it is asked.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NOTIFY_TEST_STACK"] != nil, "needs PostgreSQL: run deploy/local/test.sh"))
struct BrokerUserProvisionerTests {
    /// Records every call; fails them all while `failing`; runs `whileCreating` inside `putUser`.
    final class RecordingAdministration: BrokerAdministration {
        private let state = Mutex<(calls: [String], failing: Bool)>(([], false))
        let whileCreating: @Sendable (String) async -> Void

        init(whileCreating: @escaping @Sendable (String) async -> Void = { _ in }) {
            self.whileCreating = whileCreating
        }

        var calls: [String] { state.withLock { $0.calls } }

        func fail(_ failing: Bool) {
            state.withLock { $0.failing = failing }
        }

        private func record(_ call: String) throws(BrokerAdminError) {
            let failing = state.withLock { state in
                state.calls.append(call)
                return state.failing
            }
            if failing { throw BrokerAdminError(code: .unreachable, operation: call, detail: "the test's administration is down") }
        }

        func putUser(_ user: String, passwordHash: String) async throws(BrokerAdminError) {
            try record("put \(user) \(passwordHash)")
            await whileCreating(user)
        }

        func putPermissions(_ permissions: BrokerPermissions, of user: String) async throws(BrokerAdminError) {
            try record("permissions \(user) configure=\(permissions.configure) write=\(permissions.write) read=\(permissions.read)")
        }

        func deleteUser(_ user: String) async throws(BrokerAdminError) {
            try record("delete \(user)")
        }

        func putPolicy(_ policy: BrokerPolicy) async throws(BrokerAdminError) {
            try record("policy \(policy.name)")
        }
    }

    private static let logger = Logger(label: "broker-user-provisioner-tests")

    /// Polls until `condition` holds, for up to 20 s; answers whether it did.
    private static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    @Test("a recorded user is created with the app publisher's permissions from its hash, then marked and its hash cleared; one whose row went while it was created is deleted again; a retired one is deleted, then its row; while the management API fails users wait, and a user recorded later is created at once, without waiting for the next look")
    func provisions() async throws {
        try await ScratchDatabase.with(writerURL: StorageTestDatabase.databaseURL, logger: Self.logger) { client in
            let applier = CommandBatchApplier(client: client, logger: Self.logger)
            let inspection = StoreInspection(client: client, logger: Self.logger)
            let appId = "app_prov"
            let (created, vanishing, retired, later) = ("\(appId).created", "\(appId).vanishing", "\(appId).retired", "\(appId).later")
            let hashes = [created: BrokerPasswordHash.sha256(of: "one"), vanishing: BrokerPasswordHash.sha256(of: "two"), later: BrokerPasswordHash.sha256(of: "three")]
            func record(_ user: String, retiresAt: Date? = nil) -> StorageCommand {
                StorageCommand(action: .putBrokerUser(BrokerUserRecord(
                    appId: appId, user: user, createdAt: Date(), retiresAt: retiresAt, passwordHash: hashes[user])))
            }
            // Another storage instance deletes this one's row while it is being created: its request gave up (the undo
            // retires the user now), and it forgot the user once it deleted it from RabbitMQ.
            let administration = RecordingAdministration { user in
                guard user == vanishing else { return }
                let undo = StorageCommand(action: .putBrokerUser(BrokerUserRecord(appId: appId, user: user, createdAt: Date(), retiresAt: Date())))
                _ = try? await applier.apply([undo])
                try? await BrokerUserStore(client: client, logger: Self.logger).forgetRetired(user)
            }
            _ = try await applier.apply([
                StorageCommand(action: .createApp(AppRecord(
                    appId: appId, name: "provisioner test", apiKeyHash: UUID().lowercasedString, clientSigningKey: "key", brokerUser: nil,
                    createdAt: Date()))),
                record(created), record(vanishing), record(retired, retiresAt: Date().addingTimeInterval(-1)),
            ])
            // An hour between looks: what happens sooner was announced, or retried after a failure.
            let provisioner = BrokerUserProvisioner(client: client, administration: administration, interval: .seconds(3600), logger: Self.logger)
            try await withServices([provisioner], logger: Self.logger) {
                #expect(try await Self.eventually {
                    let (createdRow, retiredRow) = (try await inspection.brokerUser(created), try await inspection.brokerUser(retired))
                    return createdRow == StoreInspection.BrokerUserRow(passwordHash: nil, provisioned: true) && retiredRow == nil && administration.calls.contains("delete \(vanishing)")
                }, "calls: \(administration.calls)")
                let calls = administration.calls
                #expect(calls.contains("put \(created) \(hashes[created]!)"))
                #expect(calls.contains(#"permissions app_prov.created configure=^app_prov\.created\.reply\..+$ write=^notify\.ingest$ read=^app_prov\.created\.reply\..+$"#))
                #expect(calls.firstIndex(of: "put \(vanishing) \(hashes[vanishing]!)") ?? .max < calls.firstIndex(of: "delete \(vanishing)") ?? -1,
                    "the user whose row went is deleted after it was created")
                #expect(calls.contains("delete \(retired)") && !calls.contains { $0.hasPrefix("put \(retired)") }, "a retired user is deleted, never created")
                #expect(try await inspection.brokerUser(vanishing) == nil)

                administration.fail(true)
                _ = try await applier.apply([record(later)])
                #expect(try await Self.eventually { administration.calls.filter { $0.hasPrefix("put \(later)") }.count >= 2 }, "tried again after a failure")
                #expect(try await inspection.brokerUser(later) == StoreInspection.BrokerUserRow(passwordHash: hashes[later], provisioned: false), "it waits, with its hash")
                administration.fail(false)
                #expect(try await Self.eventually { try await inspection.brokerUser(later) == StoreInspection.BrokerUserRow(passwordHash: nil, provisioned: true) })

                let announced = "\(appId).announced"
                _ = try await applier.apply([StorageCommand(action: .putBrokerUser(BrokerUserRecord(
                    appId: appId, user: announced, createdAt: Date(), retiresAt: nil, passwordHash: BrokerPasswordHash.sha256(of: "four"))))])
                #expect(try await Self.eventually { try await inspection.brokerUser(announced)?.provisioned == true }, "created when announced")
            }
        }
    }
}
