import NIOCore
import NotifyAPNsCore

/// Sits between TLS and HTTP/2 and joins the bytes written between two flushes into one buffer, so that a flush
/// (every request started in one event-loop tick) is one TLS write instead of three TLS records per request
/// (HEADERS, the DATA frame header, the DATA payload).
final class APNsConnectionWriteCoalescer: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var pending: ByteBuffer?
    private var pendingPromise: EventLoopPromise<Void>?

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .byteBuffer(var bytes) = unwrapOutboundIn(data) else {
            // HTTP/2 writes only byte buffers; anything else keeps its place after what is pending.
            writePending(context: context)
            context.write(data, promise: promise)
            return
        }
        if pending == nil {
            pending = context.channel.allocator.buffer(capacity: max(bytes.readableBytes, 4096))
        }
        pending!.writeBuffer(&bytes)
        if let promise {
            if let pendingPromise {
                pendingPromise.futureResult.cascade(to: promise)
            } else {
                pendingPromise = promise
            }
        }
    }

    func flush(context: ChannelHandlerContext) {
        writePending(context: context)
        context.flush()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        pending = nil
        pendingPromise?.fail(ChannelError.ioOnClosedChannel)
        pendingPromise = nil
    }

    private func writePending(context: ChannelHandlerContext) {
        guard let bytes = pending else { return }
        let promise = pendingPromise
        pending = nil
        pendingPromise = nil
        context.write(wrapOutboundOut(.byteBuffer(bytes)), promise: promise)
    }
}

@available(*, unavailable)
extension APNsConnectionWriteCoalescer: Sendable {}
