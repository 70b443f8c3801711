import Foundation
import Logging
import NotifyDatabase
import NotifyModels
import NotifyWire
import PostgresNIO

/// Migration 13: moves the outbox's change events from JSON text (`events`, schema version 1) to the wire
/// format (`wire_events`), a page of rows at a time, so a command redelivered after the upgrade re-emits its
/// events in the form every reader reads. A row whose JSON cannot be read loses its outbox entry (logged): its
/// command stays applied, and only a redelivery of it would have needed the events.
enum OutboxConversion {
    static let rowsPerPage = 5_000

    @Sendable static func run(on connection: PostgresConnection, logger: Logger) async throws {
        var converted = 0
        while true {
            var ids: [UUID] = []
            var fragments: [ByteBuffer] = []
            let rows = try await connection.query(
                "SELECT command_id, events FROM applied_commands WHERE events IS NOT NULL LIMIT \(rowsPerPage)", logger: logger)
            for try await (id, json) in rows.decode((UUID, String).self) {
                ids.append(id)
                do {
                    let batch = try ChangeEventBatch(legacyJSON: Data(("{\"events\":[" + json + "]}").utf8))
                    fragments.append(ByteBuffer(bytes: batch.events.wireFragment()))
                } catch {
                    logger.error("an outbox entry could not be read; dropped", metadata: ["commandId": "\(id)", "error": "\(error)"])
                    fragments.append(ByteBuffer())
                }
            }
            if ids.isEmpty { break }
            try await connection.query(
                """
                UPDATE applied_commands SET wire_events = NULLIF(page.fragment, ''::bytea), events = NULL
                FROM unnest(\(ArrayParameter(ids))::uuid[], \(ArrayParameter(fragments))::bytea[]) AS page(id, fragment)
                WHERE command_id = page.id
                """, logger: logger)
            converted += ids.count
        }
        if converted > 0 { logger.info("outbox moved to the wire format", metadata: ["rows": "\(converted)"]) }
    }
}
