import PostgresNIO

extension PostgresClient {
    /// Listens on `channel` until the task is cancelled, on a connection of its own, connecting again a second after
    /// the connection drops. `listening` is called each time a listen begins (what was announced before it went
    /// unheard), `received` with each notification's payload, and `stopped` each time a listen ends, with the error
    /// unless the task was cancelled.
    public func listen(
        on channel: String, listening: @Sendable () -> Void, received: @Sendable (String) -> Void, stopped: @Sendable ((any Error)?) -> Void
    ) async {
        while !Task.isCancelled {
            do {
                try await withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        listening()
                        for try await notification in notifications { received(notification.payload) }
                    }
                }
                stopped(nil)
            } catch {
                stopped(Task.isCancelled ? nil : error)
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
