import Crypto
import Foundation

/// Decrypts a Web Push message the way the user agent does: RFC 8188 `aes128gcm` content coding
/// with the RFC 8291 key derivation from the subscription's private key and auth secret.
enum WebPushDecryptor {
    /// salt (16) || record size (4) || key id length (1): the header before the key id.
    private static let fixedHeaderSize = 21
    private static let senderKeySize = 65
    private static let tagSize = 16

    /// The plaintext of `body`, or why it cannot be decrypted.
    static func decrypt(
        _ body: [UInt8],
        privateKey: P256.KeyAgreement.PrivateKey,
        authSecret: Data
    ) throws(WebPushError) -> [UInt8] {
        guard body.count > fixedHeaderSize else { throw .invalidEncryption("the aes128gcm header is truncated") }
        let salt = body[0..<16]
        let recordSize = body[16..<20].reduce(0) { $0 << 8 | Int($1) }
        let keyIdLength = Int(body[20])
        guard keyIdLength == senderKeySize, body.count >= fixedHeaderSize + keyIdLength + tagSize + 1 else {
            throw .invalidEncryption("the key id must be the sender's 65-byte public key")
        }
        let senderKey = body[fixedHeaderSize..<fixedHeaderSize + keyIdLength]
        let record = body[(fixedHeaderSize + keyIdLength)...]
        guard recordSize >= tagSize + 2, record.count <= recordSize else {
            throw .invalidEncryption("a push message must be a single record no larger than the record size")
        }
        guard let senderPublicKey = try? P256.KeyAgreement.PublicKey(x963Representation: senderKey),
            let sharedSecret = try? privateKey.sharedSecretFromKeyAgreement(with: senderPublicKey)
        else { throw .invalidEncryption("the key id is not a P-256 public key") }

        // RFC 8291 §3.4: IKM = HKDF(auth secret, ECDH secret, "WebPush: info" 0x00 || ua_public || as_public, 32).
        let keyInfo = Data("WebPush: info\0".utf8) + privateKey.publicKey.x963Representation + senderKey
        let inputKeyMaterial = sharedSecret.hkdfDerivedSymmetricKey(
            using: SHA256.self,
            salt: authSecret,
            sharedInfo: keyInfo,
            outputByteCount: 32
        )
        // RFC 8188 §2.2 and §2.3: content encryption key and nonce from the salt.
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial,
            salt: salt,
            info: Data("Content-Encoding: aes128gcm\0".utf8),
            outputByteCount: 16
        )
        let nonce = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKeyMaterial,
            salt: salt,
            info: Data("Content-Encoding: nonce\0".utf8),
            outputByteCount: 12
        ).withUnsafeBytes { Data($0) }

        let padded: Data
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce),
                ciphertext: record.dropLast(tagSize),
                tag: record.suffix(tagSize)
            )
            padded = try AES.GCM.open(box, using: contentKey)
        } catch {
            throw .invalidEncryption("authentication failed: not encrypted for this subscription's keys")
        }
        // The only (so last) record ends with the delimiter 0x02, then zero or more 0x00.
        guard let delimiter = padded.lastIndex(where: { $0 != 0 }), padded[delimiter] == 2 else {
            throw .invalidEncryption("the padding delimiter of the last record must be 0x02")
        }
        return Array(padded[..<delimiter])
    }
}
