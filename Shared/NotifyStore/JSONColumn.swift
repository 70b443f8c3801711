import Foundation
import NotifyModels

/// Values kept in `jsonb` columns, bound as their JSON text in the wire coding (`::jsonb` in the statement) and read
/// back from `::text`.
enum JSONColumn {
    static func text(_ value: some Encodable) throws -> String {
        String(decoding: try WireCoding.makeEncoder().encode(value), as: UTF8.self)
    }
}
