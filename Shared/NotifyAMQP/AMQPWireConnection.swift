import CAMQPShim
import CRabbitMQ
import Foundation

/// One librabbitmq connection with one channel, used only by the thread that owns it.
///
/// Every call blocks; none of them may run on Swift's cooperative pool.
final class AMQPWireConnection {
    /// Something the broker sent that the owner must act on.
    enum InboundEvent {
        case delivery(AMQPDelivery)
        case ack(tag: UInt64, multiple: Bool)
        case nack(tag: UInt64, multiple: Bool)
        case returned(messageId: String?, reason: String)
    }

    private static let channel: amqp_channel_t = 1
    private let state: amqp_connection_state_t
    private var open = true
    let socketDescriptor: Int32
    let generation: UInt64

    /// Connects to `endpoint`, one of `configuration.endpoints`.
    init(configuration: AMQPConfiguration, endpoint: AMQPConfiguration.Endpoint, generation: UInt64) throws(AMQPError) {
        guard let state = amqp_new_connection() else {
            throw AMQPError(code: .connectionFailed, message: "out of memory creating a connection")
        }
        self.state = state
        self.generation = generation
        guard let socket = amqp_tcp_socket_new(state) else {
            amqp_destroy_connection(state)
            throw AMQPError(code: .connectionFailed, message: "could not create a TCP socket")
        }
        let timeoutParts = configuration.connectTimeout.components
        var timeout = timeval(tv_sec: Int(timeoutParts.seconds), tv_usec: Int(timeoutParts.attoseconds / 1_000_000_000_000))
        let status = endpoint.host.withCString { amqp_socket_open_noblock(socket, $0, Int32(endpoint.port), &timeout) }
        if status != 0 {
            amqp_destroy_connection(state)
            throw AMQPError(
                code: .connectionFailed,
                message: "cannot reach \(endpoint): \(String(cString: amqp_error_string2(status)))")
        }
        let login = notify_amqp_login_plain(
            state, configuration.virtualHost, 0, 131_072, Int32(configuration.heartbeatSeconds),
            configuration.user, configuration.password)
        if let error = Self.error(from: login, doing: "log in to vhost '\(configuration.virtualHost)'") {
            amqp_destroy_connection(state)
            throw error
        }
        amqp_channel_open(state, Self.channel)
        if let error = Self.error(from: amqp_get_rpc_reply(state), doing: "open a channel") {
            amqp_destroy_connection(state)
            throw error
        }
        socketDescriptor = amqp_get_sockfd(state)
    }

    deinit {
        close()
    }

    /// Closes the channel and connection politely (unacked deliveries go back to their queues).
    func close() {
        guard open else { return }
        open = false
        _ = amqp_channel_close(state, Self.channel, AMQP_REPLY_SUCCESS)
        _ = amqp_connection_close(state, AMQP_REPLY_SUCCESS)
        amqp_destroy_connection(state)
    }

    /// Drops a broken connection without the closing handshake.
    func abandon() {
        guard open else { return }
        open = false
        amqp_destroy_connection(state)
    }

    // MARK: Setup

    func declare(_ topology: AMQPTopology) throws(AMQPError) {
        for exchange in topology.exchanges {
            exchange.name.withAMQPBytes { name in
                exchange.type.withAMQPBytes { type in
                    _ = amqp_exchange_declare(state, Self.channel, name, type, 0, 1, 0, 0, amqp_table_t(num_entries: 0, entries: nil))
                }
            }
            try check(amqp_get_rpc_reply(state), doing: "declare exchange '\(exchange.name)'")
        }
        for queue in topology.queues {
            var arguments: [(String, AMQPHeaderValue)] = queue.durable ? [("x-queue-type", .string("quorum"))] : []
            if let deadLetter = queue.deadLetterQueue {
                arguments.append(("x-dead-letter-exchange", .string(AMQPTopology.deadLetterExchange)))
                arguments.append(("x-dead-letter-routing-key", .string(deadLetter)))
            }
            if let limit = queue.deliveryLimit {
                arguments.append(("x-delivery-limit", .integer(Int64(limit))))
            }
            withAMQPTable(arguments) { table in
                queue.name.withAMQPBytes { name in
                    _ = amqp_queue_declare(state, Self.channel, name, 0, queue.durable ? 1 : 0, 0, queue.durable ? 0 : 1, table)
                }
            }
            try check(amqp_get_rpc_reply(state), doing: "declare queue '\(queue.name)'")
        }
        for binding in topology.bindings {
            binding.queue.withAMQPBytes { queue in
                binding.exchange.withAMQPBytes { exchange in
                    binding.routingKey.withAMQPBytes { key in
                        _ = amqp_queue_bind(state, Self.channel, queue, exchange, key, amqp_table_t(num_entries: 0, entries: nil))
                    }
                }
            }
            try check(amqp_get_rpc_reply(state), doing: "bind '\(binding.queue)' to '\(binding.exchange)'")
        }
    }

    func enablePublisherConfirms() throws(AMQPError) {
        amqp_confirm_select(state, Self.channel)
        try check(amqp_get_rpc_reply(state), doing: "enable publisher confirms")
    }

    func startConsuming(queue: String, prefetch: Int) throws(AMQPError) {
        amqp_basic_qos(state, Self.channel, 0, UInt16(clamping: prefetch), 0)
        try check(amqp_get_rpc_reply(state), doing: "set prefetch")
        queue.withAMQPBytes { name in
            _ = amqp_basic_consume(state, Self.channel, name, amqp_bytes_t(len: 0, bytes: nil), 0, 0, 0, amqp_table_t(num_entries: 0, entries: nil))
        }
        try check(amqp_get_rpc_reply(state), doing: "consume from '\(queue)'")
    }

    /// How many messages are ready in `queue` and how many consumers it has (a passive declare: nothing is created);
    /// nil when there is no such queue. The broker closes the channel over a missing queue; it is opened again here.
    func counts(of queue: String) throws(AMQPError) -> (messages: Int, consumers: Int)? {
        let declared = queue.withAMQPBytes { name in
            amqp_queue_declare(state, Self.channel, name, 1, 0, 0, 0, amqp_table_t(num_entries: 0, entries: nil))
        }
        let action = "read the depth of queue '\(queue)'"
        if let refusal = try refusal(of: amqp_get_rpc_reply(state), doing: action) {
            guard refusal.code == 404 else { throw refusal.error }
            return nil
        }
        guard let declared else { throw AMQPError(code: .protocolError, message: "no answer to the passive declare of '\(queue)'") }
        return (Int(declared.pointee.message_count), Int(declared.pointee.consumer_count))
    }

    /// Binds `binding.queue` to `binding.exchange` with its routing key (queue.bind). Throws `.refused` when the broker
    /// refuses (a queue or exchange that does not exist, a permission the user lacks); the connection stays usable.
    func bind(_ binding: AMQPTopology.Binding) throws(AMQPError) {
        binding.queue.withAMQPBytes { queue in
            binding.exchange.withAMQPBytes { exchange in
                binding.routingKey.withAMQPBytes { key in
                    _ = amqp_queue_bind(state, Self.channel, queue, exchange, key, amqp_table_t(num_entries: 0, entries: nil))
                }
            }
        }
        if let refusal = try refusal(of: amqp_get_rpc_reply(state), doing: "bind '\(binding.queue)' to '\(binding.exchange)'") {
            throw refusal.error
        }
    }

    /// Takes `binding` away (queue.unbind). A queue or exchange that does not exist has no binding, which is what was
    /// asked; any other refusal throws `.refused`, and the connection stays usable.
    func unbind(_ binding: AMQPTopology.Binding) throws(AMQPError) {
        binding.queue.withAMQPBytes { queue in
            binding.exchange.withAMQPBytes { exchange in
                binding.routingKey.withAMQPBytes { key in
                    _ = amqp_queue_unbind(state, Self.channel, queue, exchange, key, amqp_table_t(num_entries: 0, entries: nil))
                }
            }
        }
        if let refusal = try refusal(of: amqp_get_rpc_reply(state), doing: "unbind '\(binding.queue)' from '\(binding.exchange)'"),
            refusal.code != 404
        {
            throw refusal.error
        }
    }

    // MARK: Publishing and acknowledging

    /// Sends one message; a `mandatory` one that reaches no queue comes back as basic.return.
    func publish(_ message: AMQPOutboundMessage) throws(AMQPError) {
        var strings = CStringArena()
        var properties = amqp_basic_properties_t()
        var flags: amqp_flags_t = notify_flag_delivery_mode
        properties.delivery_mode = message.properties.persistent ? 2 : 1
        if let value = message.properties.contentType {
            flags |= notify_flag_content_type
            properties.content_type = strings.bytes(value)
        }
        if let value = message.properties.messageId {
            flags |= notify_flag_message_id
            properties.message_id = strings.bytes(value)
        }
        if let value = message.properties.correlationId {
            flags |= notify_flag_correlation_id
            properties.correlation_id = strings.bytes(value)
        }
        if let value = message.properties.replyTo {
            flags |= notify_flag_reply_to
            properties.reply_to = strings.bytes(value)
        }
        if let value = message.properties.userId {
            flags |= notify_flag_user_id
            properties.user_id = strings.bytes(value)
        }
        if !message.properties.headers.isEmpty { flags |= notify_flag_headers }
        properties._flags = flags
        let exchange = strings.bytes(message.exchange)
        let routingKey = strings.bytes(message.routingKey)
        let status = withAMQPTable(message.properties.headers.map { ($0.key, $0.value) }) { headers in
            properties.headers = headers
            return message.body.withUnsafeBytes { body in
                amqp_basic_publish(
                    state, Self.channel, exchange, routingKey, message.mandatory ? 1 : 0, 0, &properties,
                    amqp_bytes_t(len: body.count, bytes: UnsafeMutableRawPointer(mutating: body.baseAddress)))
            }
        }
        if status != 0 {
            throw AMQPError(code: .connectionLost, message: "publish failed: \(String(cString: amqp_error_string2(status)))")
        }
    }

    func ack(_ tag: UInt64, multiple: Bool) throws(AMQPError) {
        let status = amqp_basic_ack(state, Self.channel, tag, multiple ? 1 : 0)
        if status != 0 {
            throw AMQPError(code: .connectionLost, message: "ack failed: \(String(cString: amqp_error_string2(status)))")
        }
    }

    func reject(_ tag: UInt64, requeue: Bool) throws(AMQPError) {
        let status = amqp_basic_nack(state, Self.channel, tag, 0, requeue ? 1 : 0)
        if status != 0 {
            throw AMQPError(code: .connectionLost, message: "nack failed: \(String(cString: amqp_error_string2(status)))")
        }
    }

    // MARK: Reading

    /// Whether librabbitmq holds bytes or frames it has not handed out yet.
    var hasBufferedInput: Bool {
        amqp_data_in_buffer(state) != 0 || amqp_frames_enqueued(state) != 0
    }

    /// The next event the broker sent, without waiting; nil when there is none right now.
    /// Heartbeats are sent and checked inside this call.
    func nextEvent() throws(AMQPError) -> InboundEvent? {
        // librabbitmq decodes every frame into a per-channel pool that only grows until it is recycled
        // (about 0.7 KB per delivery or confirm). Nothing returned earlier points into it any more.
        amqp_maybe_release_buffers(state)
        while true {
            var frame = amqp_frame_t()
            var noWait = timeval(tv_sec: 0, tv_usec: 0)
            let status = amqp_simple_wait_frame_noblock(state, &frame, &noWait)
            if status == AMQP_STATUS_TIMEOUT.rawValue { return nil }
            if status != 0 {
                throw AMQPError(code: .connectionLost, message: String(cString: amqp_error_string2(status)))
            }
            let method = notify_frame_method_id(&frame)
            switch method {
            case 0:
                continue
            case notify_method_basic_deliver:
                let deliver = notify_frame_method_decoded(&frame)!.assumingMemoryBound(to: amqp_basic_deliver_t.self).pointee
                let content = try readContent()
                return .delivery(AMQPDelivery(
                    tag: AMQPDeliveryTag(connectionGeneration: generation, value: deliver.delivery_tag),
                    exchange: deliver.exchange.string,
                    routingKey: deliver.routing_key.string,
                    redelivered: deliver.redelivered != 0,
                    body: content.body,
                    properties: content.properties))
            case notify_method_basic_ack:
                let ack = notify_frame_method_decoded(&frame)!.assumingMemoryBound(to: amqp_basic_ack_t.self).pointee
                return .ack(tag: ack.delivery_tag, multiple: ack.multiple != 0)
            case notify_method_basic_nack:
                let nack = notify_frame_method_decoded(&frame)!.assumingMemoryBound(to: amqp_basic_nack_t.self).pointee
                return .nack(tag: nack.delivery_tag, multiple: nack.multiple != 0)
            case notify_method_basic_return:
                let returned = notify_frame_method_decoded(&frame)!.assumingMemoryBound(to: amqp_basic_return_t.self).pointee
                let reason = "\(returned.reply_code) \(returned.reply_text.string) (exchange '\(returned.exchange.string)', routing key '\(returned.routing_key.string)')"
                let content = try readContent()
                return .returned(messageId: content.properties.messageId, reason: reason)
            case notify_method_channel_close:
                let close = notify_frame_method_decoded(&frame)!.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
                throw AMQPError(code: .channelClosed, message: "broker closed the channel: \(close.reply_code) \(close.reply_text.string)")
            case notify_method_connection_close:
                let close = notify_frame_method_decoded(&frame)!.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
                throw AMQPError(code: .connectionLost, message: "broker closed the connection: \(close.reply_code) \(close.reply_text.string)")
            case notify_method_basic_cancel:
                throw AMQPError(code: .channelClosed, message: "the broker cancelled the consumer (queue deleted?)")
            default:
                continue
            }
        }
    }

    private func readContent() throws(AMQPError) -> (body: Data, properties: AMQPProperties) {
        var message = amqp_message_t()
        let reply = amqp_read_message(state, Self.channel, &message, 0)
        if let error = Self.error(from: reply, doing: "read a message body") {
            throw error
        }
        defer { amqp_destroy_message(&message) }
        let body = message.body.len > 0 ? Data(bytes: message.body.bytes, count: message.body.len) : Data()
        return (body, AMQPProperties(message.properties))
    }

    // MARK: Errors

    /// The broker's refusal of the call whose `reply` this is, when it closed the channel over it: the close is
    /// answered and the channel opened again, so the connection stays usable. nil when the call succeeded; any other
    /// failure throws (and leaves the connection unusable).
    private func refusal(of reply: amqp_rpc_reply_t, doing action: String) throws(AMQPError) -> (code: UInt16, error: AMQPError)? {
        guard reply.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION, reply.reply.id == notify_method_channel_close, let decoded = reply.reply.decoded else {
            try check(reply, doing: action)
            return nil
        }
        // Read before the close is answered: librabbitmq reuses the memory the method was decoded into.
        let close = decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
        let refusal = (close.reply_code, AMQPError(code: .refused, message: "could not \(action): \(close.reply_code) \(close.reply_text.string)"))
        if notify_amqp_channel_close_ok(state, Self.channel) != 0 {
            throw AMQPError(code: .connectionLost, message: "could not answer the broker's close of the channel")
        }
        amqp_channel_open(state, Self.channel)
        try check(amqp_get_rpc_reply(state), doing: "open the channel again")
        return refusal
    }

    private func check(_ reply: amqp_rpc_reply_t, doing action: String) throws(AMQPError) {
        if let error = Self.error(from: reply, doing: action) { throw error }
    }

    private static func error(from reply: amqp_rpc_reply_t, doing action: String) -> AMQPError? {
        switch reply.reply_type {
        case AMQP_RESPONSE_NORMAL:
            return nil
        case AMQP_RESPONSE_LIBRARY_EXCEPTION:
            return AMQPError(code: .connectionFailed, message: "could not \(action): \(String(cString: amqp_error_string2(reply.library_error)))")
        case AMQP_RESPONSE_SERVER_EXCEPTION:
            if reply.reply.id == notify_method_connection_close, let decoded = reply.reply.decoded {
                let close = decoded.assumingMemoryBound(to: amqp_connection_close_t.self).pointee
                return AMQPError(code: .connectionFailed, message: "could not \(action): \(close.reply_code) \(close.reply_text.string)")
            }
            if reply.reply.id == notify_method_channel_close, let decoded = reply.reply.decoded {
                let close = decoded.assumingMemoryBound(to: amqp_channel_close_t.self).pointee
                return AMQPError(code: .channelClosed, message: "could not \(action): \(close.reply_code) \(close.reply_text.string)")
            }
            return AMQPError(code: .protocolError, message: "could not \(action): unexpected server reply")
        default:
            return AMQPError(code: .protocolError, message: "could not \(action): no reply")
        }
    }
}
