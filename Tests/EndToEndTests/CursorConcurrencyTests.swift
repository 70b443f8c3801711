import Foundation
import NotifyModels
import Testing

extension EndToEndTests {
    @Suite("the cursor guarantee under concurrency")
    struct CursorConcurrencyTests {
        static let writers = 6
        static let writesPerWriter = 25

        actor WritersState {
            enum State { case running, done, failed }
            var state = State.running
            func finish(failed: Bool) { state = failed ? .failed : .done }
        }

        /// What the reader saw while polling.
        struct ReaderLog: Sendable {
            var changes: [NotificationChange] = []
            var polls = 0
            /// Polls that answered while the writers were still writing (so the reader did race them).
            var pollsWhileWriting = 0
        }

        @Test("6 concurrent writers, a reader polling with its cursor: the union of its pages is exactly the committed changes")
        func readerSeesEveryCommittedChangeOnce() async throws {
            let app = try await TestApp.create()
            let userId = "user-\(uniqueSuffix())"
            let user = try await app.user(userId)

            // One stored notification per writer to change the state of.
            var seedIds: [String] = []
            for writer in 0..<Self.writers {
                seedIds.append(try await app.publishAccepted(.alert(to: userId, title: "seed \(writer)")))
            }
            let seeds = seedIds
            _ = try await user.waitForChanges(after: nil) { $0.count >= Self.writers }

            let expectedTotal = Self.writers + Self.writers * Self.writesPerWriter
            let writersState = WritersState()

            // The writers: each alternates publishing and changing the read state of its seed, over HTTP.
            let writers = Task {
                do {
                    try await withThrowingTaskGroup(of: Void.self) { writers in
                        for writer in 0..<Self.writers {
                            writers.addTask {
                                for write in 0..<Self.writesPerWriter {
                                    if write % 2 == 0 {
                                        _ = try await app.publishAccepted(.alert(to: userId, title: "writer \(writer) write \(write)"))
                                    } else {
                                        let state: ReadState = write % 4 == 1 ? .read : .unread
                                        try await user.patchAccepted(seeds[writer], StateChangeRequest(readState: state))
                                    }
                                }
                            }
                        }
                        try await writers.waitForAll()
                    }
                    await writersState.finish(failed: false)
                } catch {
                    await writersState.finish(failed: true)
                    throw error
                }
            }
            // The reader: polls with its cursor until the writers are done and it has read everything they made.
            let reader = Task {
                var log = ReaderLog()
                var cursor: String?
                let deadline = ContinuousClock.now + .seconds(120)
                while ContinuousClock.now < deadline {
                    let page = try await user.changes(after: cursor, limit: 10)
                    log.polls += 1
                    log.changes += page.changes
                    cursor = page.cursor
                    if page.hasMore { continue }
                    let state = await writersState.state
                    if state == .running { log.pollsWhileWriting += 1 }
                    if state == .failed { break }
                    if state == .done && log.changes.count >= expectedTotal {
                        // Caught up; one more look for anything beyond what the writers made.
                        try await Task.sleep(for: .milliseconds(500))
                        log.changes += try await user.allChanges(after: cursor, limit: 10).changes
                        break
                    }
                    try await Task.sleep(for: .milliseconds(20))
                }
                return log
            }
            try await writers.value
            let log = try await reader.value

            let committed = try await Database.inspecting { try await $0.changeSequences(appId: app.appId, userId: userId) }
            let read = log.changes.map(\.sequence)
            #expect(log.pollsWhileWriting >= 5, "the reader caught up only \(log.pollsWhileWriting) times while the writers wrote: the test did not race them")
            #expect(committed.count == expectedTotal, "committed changes: \(committed.count), expected \(expectedTotal) (seeds and writes)")
            #expect(committed == Array(1...Int64(committed.count)), "the committed sequences are not 1...\(committed.count) contiguous: \(committed)")
            #expect(zip(read, read.dropFirst()).allSatisfy { $0 < $1 }, "the reader's sequences are not strictly increasing: \(read)")
            #expect(Set(read).count == read.count, "the reader saw a change twice: \(read)")
            let missing = Set(committed).subtracting(read).sorted()
            let extra = Set(read).subtracting(committed).sorted()
            #expect(missing.isEmpty, "the reader skipped committed changes \(missing) (it polled \(log.polls) times)")
            #expect(extra.isEmpty, "the reader saw changes that are not committed: \(extra)")
            #expect(read == committed, "the union of the reader's pages differs from the committed changes")
        }
    }
}
