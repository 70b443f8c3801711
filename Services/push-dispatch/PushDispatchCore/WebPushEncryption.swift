import Crypto
import Foundation
import NotifyModels

/// RFC 8291 message encryption: the `aes128gcm` content coding (RFC 8188) of one record, keyed by an
/// ephemeral P-256 key agreement with the subscription's `p256dh` key and its `auth` secret.
enum WebPushEncryption {
    /// The record size announced in the header; a push message is a single record.
    static let recordSize: UInt32 = 4096

    struct InvalidKeys: Error {}

    /// The `aes128gcm` body: salt (16) || record size (4, big endian) || key id length (65) || the sender's
    /// public key || the sealed plaintext followed by the 0x02 last-record delimiter.
    static func encrypt(
        _ plaintext: some DataProtocol, for keys: WebPushKeys,
        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
        salt: Data = Data((0..<16).map { _ in UInt8.random(in: 0...255) })
    ) throws -> Data {
        guard let userAgentKeyBytes = Base64URLCoding.decode(keys.p256dh), let authSecret = Base64URLCoding.decode(keys.auth),
            let userAgentKey = try? P256.KeyAgreement.PublicKey(x963Representation: userAgentKeyBytes)
        else { throw InvalidKeys() }
        let senderPublicKey = senderKey.publicKey.x963Representation
        let sharedSecret = try senderKey.sharedSecretFromKeyAgreement(with: userAgentKey)
        // RFC 8291 §3.4: IKM = HKDF(auth secret, ECDH secret, "WebPush: info" 0x00 || ua_public || as_public, 32).
        let inputKeyMaterial = sharedSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret,
            sharedInfo: Data("WebPush: info\0".utf8) + userAgentKey.x963Representation + senderPublicKey, outputByteCount: 32)
        // RFC 8188 §2.2, §2.3: the content-encryption key and the nonce from the salt.
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial, salt: salt, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial, salt: salt, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12
        ).withUnsafeBytes { Data($0) }
        let sealed = try AES.GCM.seal(Data(plaintext) + [2], using: contentKey, nonce: AES.GCM.Nonce(data: nonce))
        var body = salt
        withUnsafeBytes(of: recordSize.bigEndian) { body.append(contentsOf: $0) }
        body.append(UInt8(senderPublicKey.count))
        body.append(senderPublicKey)
        body.append(sealed.ciphertext)
        body.append(sealed.tag)
        return body
    }
}
