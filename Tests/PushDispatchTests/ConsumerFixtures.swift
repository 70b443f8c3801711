import Logging
import NotifyWire

@testable import NotifyAMQP

extension AMQPDelivery {
    /// `message` as a consumer of its queue receives it.
    static func received(_ message: AMQPOutboundMessage, tag: UInt64 = 1) -> AMQPDelivery {
        AMQPDelivery(received: message, tag: tag)
    }
}

extension AMQPHandling {
    /// What the consumer settles the batch with, once the handler's wait (if any) ended.
    func dispositions() async -> [AMQPDisposition] {
        switch self {
        case .settle(let dispositions): return dispositions
        case .settleAfter(let wait): return await wait()
        }
    }
}

extension AMQPOutboundMessage {
    /// The message read back as the wire type its queue carries.
    func read<Message: WireMessage>(as _: Message.Type) throws -> Message {
        try Message(body: body, contentType: properties.contentType)
    }
}

/// Quiet: these tests look at what is published, not at the log.
let quietLogger: Logger = {
    var logger = Logger(label: "push-dispatch-tests")
    logger.logLevel = .critical
    return logger
}()
