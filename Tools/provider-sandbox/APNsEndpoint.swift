import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `POST /3/device/{deviceToken}` answered as api.push.apple.com answers it: provider token,
/// token updates per connection, injected faults, then device token, headers and payload,
/// and finally the delivery record. Every answer carries `apns-id`.
struct APNsEndpoint: HTTPResponder {
    typealias Context = ConnectionRequestContext

    private static let provider = "apns"
    private static let devicePath = "/3/device"
    private static let devicePathPrefix = devicePath + "/"

    let verifier: ProviderTokenVerifier
    let tokenTracker: ConnectionTokenTracker
    let faults: FaultInjector
    let recorder: DeliveryRecorder

    func respond(to request: Request, context: Context) async throws -> Response {
        // The answer carries the request's apns-id if it is a canonical UUID, else a new one.
        let requestedID = request.headers.value(of: .apnsID)
        let hasMalformedID = requestedID.map { !UUIDText.isCanonical($0) } ?? false
        let apnsID = hasMalformedID ? UUIDText.next() : requestedID ?? UUIDText.next()
        let path = request.uri.path
        guard path == Self.devicePath || path.hasPrefix(Self.devicePathPrefix) else {
            return reject(.badPath, deviceToken: "", apnsID: apnsID)
        }
        let deviceToken = Substring(path.utf8.dropFirst(Self.devicePathPrefix.utf8.count))
        do {
            guard request.method == .post else { throw APNsError.methodNotAllowed }
            let token = try verifier.verify(authorization: request.headers.value(of: .authorization))
            guard tokenTracker.accept(token, on: context.connection) else {
                throw APNsError.tooManyProviderTokenUpdates
            }
            switch try await faults.apply(
                provider: Self.provider,
                token: deviceToken,
                connection: context.connection,
                recorder: recorder
            ) {
            case .proceed: break
            case .dropped: return Response(status: .serviceUnavailable)  // never delivered: the connection is gone
            case .fail(let fault):
                return reject(
                    APNsError(status: fault.status ?? 500, reason: fault.reason ?? ""),
                    deviceToken: deviceToken,
                    apnsID: apnsID,
                    retryAfter: fault.retryAfter,
                    timestamp: fault.timestamp
                )
            }
            try APNsRequestValidator.validateDeviceToken(deviceToken)
            let pushType = try APNsRequestValidator.validateHeaders(
                request.headers,
                key: token.key,
                hasMalformedID: hasMalformedID
            )
            let body = try await request.bodyBytes(limit: pushType.maximumPayloadSize)
            let payload = try APNsRequestValidator.validatePayload(body, pushType: pushType)
            recorder.recordDelivery(
                provider: Self.provider,
                deviceToken: String(deviceToken),
                headers: APNsRequestValidator.recordedHeaders(request.headers),
                payload: payload
            )
            return Response(status: .ok, headers: [.apnsID: apnsID, .apnsUniqueID: UUIDText.next()])
        } catch let error as APNsError {
            return reject(error, deviceToken: deviceToken, apnsID: apnsID)
        }
    }

    /// Records a refused push and answers Apple's status and `{"reason": ...}`; a 410 also carries
    /// `timestamp` (milliseconds since the epoch, default now) as APNs sends it.
    private func reject(
        _ error: APNsError,
        deviceToken: Substring,
        apnsID: String,
        retryAfter: Int? = nil,
        timestamp: Int64? = nil
    ) -> Response {
        recorder.recordRejection(
            provider: Self.provider,
            deviceToken: String(deviceToken),
            status: error.status,
            reason: error.reason
        )
        var body = "{\"reason\":\(JSONText.quoted(error.reason))"
        if error.status == 410 {
            body += ",\"timestamp\":\(timestamp ?? Int64(Date.now.timeIntervalSince1970 * 1000))"
        }
        body += "}"
        var headers: HTTPFields = [.apnsID: apnsID, .contentType: "application/json"]
        if let retryAfter {
            headers[.retryAfter] = String(retryAfter)
        }
        return Response(
            status: HTTPResponse.Status(code: error.status),
            headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: body))
        )
    }
}
