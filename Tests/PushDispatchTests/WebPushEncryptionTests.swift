import Crypto
import Foundation
import NotifyModels
import Testing

@testable import PushDispatchCore

/// RFC 8291 message encryption (`aes128gcm`): the RFC's own example, and what a browser reads of ours.
@Suite("Web Push encryption")
struct WebPushEncryptionTests {
    /// RFC 8291, Appendix A.
    enum Appendix {
        static let plaintext = "When I grow up, I want to be a watermelon"
        static let senderPrivateKey = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
        static let senderPublicKey = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
        static let userAgentPrivateKey = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
        static let userAgentPublicKey = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
        static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
        static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
        static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

        static func bytes(_ text: String) throws -> Data { try #require(Base64URLCoding.decode(text)) }

        static var userAgent: UserAgentDecryption {
            get throws {
                UserAgentDecryption(
                    privateKey: try P256.KeyAgreement.PrivateKey(rawRepresentation: bytes(userAgentPrivateKey)), authSecret: try bytes(authSecret))
            }
        }
    }

    @Test("the RFC's keys, salt and plaintext give the RFC's message, byte for byte")
    func rfc8291AppendixA() throws {
        let senderKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Appendix.bytes(Appendix.senderPrivateKey))
        #expect(Base64URLCoding.encode(senderKey.publicKey.x963Representation) == Appendix.senderPublicKey)
        let keys = WebPushKeys(p256dh: Appendix.userAgentPublicKey, auth: Appendix.authSecret)
        let body = try WebPushEncryption.encrypt(
            Data(Appendix.plaintext.utf8), for: keys, senderKey: senderKey, salt: Appendix.bytes(Appendix.salt))
        #expect(Base64URLCoding.encode(body) == Appendix.body)
    }

    @Test("the browser's side used here reads the RFC's message")
    func userAgentReadsTheRFCMessage() throws {
        let plaintext = try Appendix.userAgent.decrypt(Appendix.bytes(Appendix.body))
        #expect(String(decoding: plaintext, as: UTF8.self) == Appendix.plaintext)
    }

    @Test("a subscription reads what is encrypted for its keys: one 4096-byte record, the sender's key in the header")
    func roundTrip() throws {
        let subscription = UserAgentDecryption()
        let payload = Data(#"{"notify":{"id":"3f2c1a9e-6b1d-4c2e-9a7f-0d5e8b4c2a11","seq":7,"kind":"created"}}"#.utf8)
        let body = try WebPushEncryption.encrypt(payload, for: subscription.keys)
        #expect(try subscription.decrypt(body) == payload)
        let header = try UserAgentDecryption.header(of: body)
        #expect(header.recordSize == 4096)
        #expect(header.senderPublicKey.count == 65 && header.senderPublicKey.first == 4, "an uncompressed P-256 point")
    }

    @Test("each message has a salt and sender key of its own, and only its subscription can read it")
    func freshKeysPerMessage() throws {
        let subscription = UserAgentDecryption()
        let payload = Data("same payload".utf8)
        let first = try WebPushEncryption.encrypt(payload, for: subscription.keys)
        let second = try WebPushEncryption.encrypt(payload, for: subscription.keys)
        #expect(try UserAgentDecryption.header(of: first).salt != UserAgentDecryption.header(of: second).salt)
        #expect(try UserAgentDecryption.header(of: first).senderPublicKey != UserAgentDecryption.header(of: second).senderPublicKey)
        #expect(throws: (any Error).self) { try UserAgentDecryption().decrypt(first) }
    }

    @Test("keys that are not a P-256 point and a secret are refused", arguments: [
        WebPushKeys(p256dh: "not base64url!", auth: "BTBZMqHH6r4Tts7J_aSIgg"),
        WebPushKeys(p256dh: "AAAA", auth: "BTBZMqHH6r4Tts7J_aSIgg"),
        WebPushKeys(p256dh: Appendix.userAgentPublicKey, auth: "***"),
    ])
    func invalidKeys(keys: WebPushKeys) {
        #expect(throws: WebPushEncryption.InvalidKeys.self) { try WebPushEncryption.encrypt(Data("x".utf8), for: keys) }
    }
}
