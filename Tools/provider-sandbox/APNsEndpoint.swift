import Foundation
import NIOCore
import NIOHPACK

/// An answer of the APNs endpoint: the HEADERS of the response, `:status` included, and the body if there is one.
struct APNsResponse {
    var headers: HPACKHeaders
    var body: String? = nil
}

/// `POST /3/device/{deviceToken}` answered as api.push.apple.com answers it: provider token,
/// token updates per connection, injected faults, then device token, headers and payload,
/// and finally the delivery record. Every answer carries `apns-id`. Runs on the connection's
/// event loop; only a fault's delay puts an answer off.
struct APNsEndpoint: Sendable {
    /// What becomes of a request.
    enum Step {
        /// Answer now; nil when an injected fault dropped the connection.
        case answer(APNsResponse?)
        /// An injected fault delays the request: once the delay passed, `respond(to:after:on:)` goes on.
        case delay(TimeAmount, Fault, CheckedRequest)
    }

    /// A request whose provider token the connection accepted.
    struct CheckedRequest {
        fileprivate let request: APNsRequest
        fileprivate let apnsID: String
        fileprivate let hasMalformedID: Bool
        fileprivate let deviceToken: Substring
        fileprivate let token: ProviderToken
    }

    private static let provider = "apns"
    private static let devicePath = "/3/device"
    private static let devicePathPrefix = devicePath + "/"

    let verifier: ProviderTokenVerifier
    let tokenTracker: ConnectionTokenTracker
    let faults: FaultInjector
    let recorder: DeliveryRecorder

    /// Checks a request that arrived in full on `connection`, up to the faults injected for its device token.
    func respond(to request: APNsRequest, on connection: any Channel) -> Step {
        // The answer carries the request's apns-id if it is a canonical UUID, else a new one.
        let hasMalformedID = request.apnsID.map { !UUIDText.isCanonical($0) } ?? false
        let apnsID = hasMalformedID ? UUIDText.next() : request.apnsID ?? UUIDText.next()
        let path = request.path
        guard path == Self.devicePath || path.hasPrefix(Self.devicePathPrefix) else {
            return .answer(reject(.badPath, deviceToken: "", apnsID: apnsID))
        }
        let deviceToken = Substring(path.utf8.dropFirst(Self.devicePathPrefix.utf8.count))
        do throws(APNsError) {
            guard request.method == "POST" else { throw .methodNotAllowed }
            let token = try verifier.verify(authorization: request.authorization)
            guard tokenTracker.accept(token, on: connection) else { throw .tooManyProviderTokenUpdates }
            let checked = CheckedRequest(
                request: request, apnsID: apnsID, hasMalformedID: hasMalformedID, deviceToken: deviceToken, token: token)
            guard let fault = faults.take(provider: Self.provider, token: deviceToken) else {
                return .answer(deliver(checked))
            }
            guard fault.delayMilliseconds <= 0 else {
                return .delay(.milliseconds(Int64(fault.delayMilliseconds)), fault, checked)
            }
            return .answer(respond(to: checked, after: fault, on: connection))
        } catch {
            return .answer(reject(error, deviceToken: deviceToken, apnsID: apnsID))
        }
    }

    /// Goes on with a request once its fault's delay passed: drops the connection, fails, or delivers.
    func respond(to checked: CheckedRequest, after fault: Fault, on connection: any Channel) -> APNsResponse? {
        switch faults.outcome(of: fault, provider: Self.provider, token: checked.deviceToken, recorder: recorder) {
        case .proceed:
            return deliver(checked)
        case .dropped:
            connection.close(promise: nil)
            return nil
        case .fail(let fault):
            return reject(
                APNsError(status: fault.status ?? 500, reason: fault.reason ?? ""),
                deviceToken: checked.deviceToken,
                apnsID: checked.apnsID,
                retryAfter: fault.retryAfter,
                timestamp: fault.timestamp
            )
        }
    }

    /// Checks the device token, headers and payload, and records the push.
    private func deliver(_ checked: CheckedRequest) -> APNsResponse {
        do throws(APNsError) {
            try APNsRequestValidator.validateDeviceToken(checked.deviceToken)
            let pushType = try APNsRequestValidator.validateHeaders(
                checked.request,
                key: checked.token.key,
                hasMalformedID: checked.hasMalformedID
            )
            let payload = try APNsRequestValidator.validatePayload(checked.request.body, pushType: pushType)
            recorder.recordDelivery(
                provider: Self.provider,
                deviceToken: String(checked.deviceToken),
                headers: checked.request.recordedHeaders,
                payload: payload
            )
            var headers = HPACKHeaders()
            headers.reserveCapacity(4)
            headers.add(name: ":status", value: "200")
            headers.add(name: "apns-id", value: checked.apnsID, indexing: .nonIndexable)
            headers.add(name: "apns-unique-id", value: UUIDText.next(), indexing: .nonIndexable)
            headers.add(name: "content-length", value: "0")
            return APNsResponse(headers: headers)
        } catch {
            return reject(error, deviceToken: checked.deviceToken, apnsID: checked.apnsID)
        }
    }

    /// Records a refused push and answers Apple's status and `{"reason": ...}`; a 410 also carries
    /// `timestamp` (milliseconds since the epoch, default now) as APNs sends it.
    private func reject(
        _ error: APNsError,
        deviceToken: Substring,
        apnsID: String,
        retryAfter: String? = nil,
        timestamp: Int64? = nil
    ) -> APNsResponse {
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
        var headers = HPACKHeaders()
        headers.add(name: ":status", value: String(error.status))
        headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable)
        headers.add(name: "content-type", value: "application/json")
        if let retryAfter {
            headers.add(name: "retry-after", value: retryAfter)
        }
        return APNsResponse(headers: headers, body: body)
    }
}
