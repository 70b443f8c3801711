import Foundation
import NotifyJSON
import NotifyModels

/// What ingest's answer to a publish request says of each of its notifications: `{"id":…}` for a single
/// notification, `{"results":[{"status":…,"id":…},…]}` in order for a batch. Read with `JSONReader`, which accepts
/// what JSONDecoder accepts.
enum PublishAnswer {
    /// One notification's status and, when accepted, its id. Status -1: a 202 whose ids could not be read.
    typealias Item = (status: Int, id: UUID?)

    /// The items of a request of `count` notifications answered `status` with `body`.
    static func items(status: Int, body: [UInt8], count: Int, batched: Bool) -> [Item] {
        if batched {
            if let results = try? batchResults(body), results.count == count { return results }
            return Array(repeating: (status == 202 ? -1 : status, nil), count: count)
        }
        let id = status == 202 ? try? acceptedId(body) : nil
        return [(status == 202 && id == nil ? -1 : status, id)]
    }

    /// The `id` of `{"id": "<uuid>"}`.
    static func acceptedId(_ body: [UInt8]) throws -> UUID {
        try JSONReader.read(body) { reader in
            var id: UUID?
            try reader.readObject { reader, key in
                switch key {
                case "id" where id == nil: id = try reader.readUUID()
                default: try reader.skipValue()
                }
            }
            return try reader.required(id, "id")
        }
    }

    /// The `status` and optional `id` of every element of `results`.
    static func batchResults(_ body: [UInt8]) throws -> [Item] {
        try JSONReader.read(body) { reader in
            var results: [Item]?
            try reader.readObject { reader, key in
                switch key {
                case "results" where results == nil: results = try reader.readArray { try result(&$0) }
                default: try reader.skipValue()
                }
            }
            return try reader.required(results, "results")
        }
    }

    private static func result(_ reader: inout JSONReader) throws -> Item {
        var status: Int?, id: UUID??
        try reader.readObject { reader, key in
            switch key {
            case "status" where status == nil: status = try reader.readInt()
            case "id" where id == nil: id = .some(try reader.readOptional { try $0.readUUID() })
            default: try reader.skipValue()
            }
        }
        return (try reader.required(status, "status"), id ?? nil)
    }
}
