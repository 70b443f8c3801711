import Crypto
import Foundation
import NotifyModels

/// What a browser does with a Web Push message (RFC 8291 §3.4, RFC 8188): reads the `aes128gcm` header, agrees on the
/// key with the sender's public key it names, and opens the one record. Written apart from the service's encryption, so
/// that one mistake made in both cannot pass.
struct UserAgentDecryption {
    struct Header {
        var salt: Data
        var recordSize: UInt32
        var senderPublicKey: Data
    }

    struct Unreadable: Error {}

    let privateKey: P256.KeyAgreement.PrivateKey
    let authSecret: Data

    /// A new subscription's keys.
    init() {
        privateKey = P256.KeyAgreement.PrivateKey()
        authSecret = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
    }

    init(privateKey: P256.KeyAgreement.PrivateKey, authSecret: Data) {
        self.privateKey = privateKey
        self.authSecret = authSecret
    }

    /// The keys the subscription hands the application server.
    var keys: WebPushKeys {
        WebPushKeys(p256dh: Base64URLCoding.encode(privateKey.publicKey.x963Representation), auth: Base64URLCoding.encode(authSecret))
    }

    static func header(of body: Data) throws -> Header {
        let bytes = [UInt8](body)
        guard bytes.count > 21, bytes.count >= 21 + Int(bytes[20]) else { throw Unreadable() }
        let recordSize = bytes[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        return Header(salt: Data(bytes[0..<16]), recordSize: recordSize, senderPublicKey: Data(bytes[21..<21 + Int(bytes[20])]))
    }

    /// The plaintext of a single-record message.
    func decrypt(_ body: Data) throws -> Data {
        let header = try Self.header(of: body)
        let sealed = Data([UInt8](body)[(21 + header.senderPublicKey.count)...])
        guard sealed.count >= 16 else { throw Unreadable() }
        let senderKey = try P256.KeyAgreement.PublicKey(x963Representation: header.senderPublicKey)
        let shared = try privateKey.sharedSecretFromKeyAgreement(with: senderKey)
        let info = Data("WebPush: info\0".utf8) + privateKey.publicKey.x963Representation + header.senderPublicKey
        let inputKey = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: authSecret, sharedInfo: info, outputByteCount: 32)
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: header.salt, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: header.salt, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12
        ).withUnsafeBytes { Data($0) }
        let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
        let padded = try AES.GCM.open(box, using: contentKey)
        // The last record ends with the delimiter 0x02, then any zero padding.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 2 else { throw Unreadable() }
        return padded[padded.startIndex..<delimiter]
    }
}
