import Testing

@testable import StorageCore

/// Which of the database's refusals storage waits out (the command stays on its queue) and which dead-letter it.
@Suite struct DatabaseFailureTests {
    @Test("a write refused as read-only (a primary demoted mid-failover), a deadlock, a shutdown or a lost connection pass by themselves")
    func transient() {
        for state in ["25006", "40001", "40P01", "53300", "57P01", "57P03", "08006", nil] {
            #expect(StorageCommandHandler.isTransient(sqlState: state), "\(state ?? "no state")")
        }
    }

    @Test("a constraint, a bad value or a missing table is the command's own: retrying cannot help")
    func permanent() {
        for state in ["23505", "23503", "22P02", "42P01", "25001"] {
            #expect(!StorageCommandHandler.isTransient(sqlState: state), "\(state)")
        }
    }
}
