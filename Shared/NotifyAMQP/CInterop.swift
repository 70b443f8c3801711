import CAMQPShim
import CRabbitMQ
import Foundation

/// Keeps C copies of strings alive until it is dropped; librabbitmq keeps the pointers it is given.
struct CStringArena: ~Copyable {
    private var pointers: [UnsafeMutablePointer<CChar>] = []

    mutating func bytes(_ text: String) -> amqp_bytes_t {
        let copy = strdup(text)!
        pointers.append(copy)
        return amqp_bytes_t(len: strlen(copy), bytes: UnsafeMutableRawPointer(copy))
    }

    deinit {
        for pointer in pointers { free(pointer) }
    }
}

/// Runs `body` with an AMQP field table (queue arguments, message headers) built from `entries`.
func withAMQPTable<Result>(_ entries: [(String, AMQPHeaderValue)], _ body: (amqp_table_t) -> Result) -> Result {
    var strings = CStringArena()
    let table = UnsafeMutablePointer<amqp_table_entry_t>.allocate(capacity: max(entries.count, 1))
    defer { table.deallocate() }
    for (index, (key, value)) in entries.enumerated() {
        var entry = amqp_table_entry_t()
        entry.key = strings.bytes(key)
        switch value {
        case .string(let text):
            entry.value.kind = UInt8(AMQP_FIELD_KIND_UTF8.rawValue)
            entry.value.value.bytes = strings.bytes(text)
        case .integer(let number):
            entry.value.kind = UInt8(AMQP_FIELD_KIND_I64.rawValue)
            entry.value.value.i64 = number
        }
        (table + index).initialize(to: entry)
    }
    return body(amqp_table_t(num_entries: Int32(entries.count), entries: table))
}

extension String {
    /// Runs `body` with this string's UTF-8 bytes, valid only during the call.
    func withAMQPBytes<Result>(_ body: (amqp_bytes_t) -> Result) -> Result {
        var copy = self
        return copy.withUTF8 { buffer in
            body(amqp_bytes_t(len: buffer.count, bytes: UnsafeMutableRawPointer(mutating: buffer.baseAddress)))
        }
    }
}

extension amqp_bytes_t {
    var string: String {
        guard len > 0, let bytes else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: len), as: UTF8.self)
    }
}

extension AMQPProperties {
    /// Reads the properties librabbitmq decoded (string and integer headers; other kinds are left out).
    init(_ properties: amqp_basic_properties_t) {
        let flags = properties._flags
        func field(_ flag: amqp_flags_t, _ value: amqp_bytes_t) -> String? {
            flags & flag != 0 ? value.string : nil
        }
        var headers: [String: AMQPHeaderValue] = [:]
        if flags & notify_flag_headers != 0, let entries = properties.headers.entries {
            for index in 0..<Int(properties.headers.num_entries) {
                let entry = entries[index]
                let value = entry.value.value
                switch Int(entry.value.kind) {
                case Int(AMQP_FIELD_KIND_UTF8.rawValue), Int(AMQP_FIELD_KIND_BYTES.rawValue): headers[entry.key.string] = .string(value.bytes.string)
                case Int(AMQP_FIELD_KIND_I8.rawValue): headers[entry.key.string] = .integer(Int64(value.i8))
                case Int(AMQP_FIELD_KIND_U8.rawValue): headers[entry.key.string] = .integer(Int64(value.u8))
                case Int(AMQP_FIELD_KIND_I16.rawValue): headers[entry.key.string] = .integer(Int64(value.i16))
                case Int(AMQP_FIELD_KIND_U16.rawValue): headers[entry.key.string] = .integer(Int64(value.u16))
                case Int(AMQP_FIELD_KIND_I32.rawValue): headers[entry.key.string] = .integer(Int64(value.i32))
                case Int(AMQP_FIELD_KIND_U32.rawValue): headers[entry.key.string] = .integer(Int64(value.u32))
                case Int(AMQP_FIELD_KIND_I64.rawValue): headers[entry.key.string] = .integer(value.i64)
                default: break
                }
            }
        }
        self.init(
            contentType: field(notify_flag_content_type, properties.content_type),
            messageId: field(notify_flag_message_id, properties.message_id),
            correlationId: field(notify_flag_correlation_id, properties.correlation_id),
            replyTo: field(notify_flag_reply_to, properties.reply_to),
            userId: field(notify_flag_user_id, properties.user_id),
            headers: headers,
            persistent: flags & notify_flag_delivery_mode != 0 && properties.delivery_mode == 2
        )
    }
}
