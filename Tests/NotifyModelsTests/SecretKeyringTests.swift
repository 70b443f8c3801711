import Foundation
import NotifyModels
import Testing

/// Sealing stored secrets: AES-GCM under the first key, opened by any key of the ring, bound to the secret's place.
struct SecretKeyringTests {
    private let old = SecretKeyring.generateEntry(id: "old")
    private let new = SecretKeyring.generateEntry(id: "new-2")

    @Test("a sealed secret opens to its plaintext, names its key and does not contain the plaintext")
    func roundTrip() throws {
        let ring = try SecretKeyring(parsing: old)
        let purpose = SecretPurpose.clientSigningKey(appId: "app_1")
        let sealed = ring.seal("the-signing-key", for: purpose)
        #expect(sealed.hasPrefix("sealed:v1:old:"))
        #expect(!sealed.contains("the-signing-key"))
        #expect(try ring.openText(sealed, for: purpose) == "the-signing-key")
        #expect(ring.seal("the-signing-key", for: purpose) != sealed, "a fresh nonce each time")
    }

    @Test("a sealed secret copied to another app's row or another column does not open")
    func boundToItsPlace() throws {
        let ring = try SecretKeyring(parsing: old)
        let sealed = ring.seal("secret", for: .webhookSecret(appId: "app_1"))
        for other: SecretPurpose in [.webhookSecret(appId: "app_2"), .clientSigningKey(appId: "app_1")] {
            #expect(throws: SecretKeyring.Failure.self) { try ring.open(sealed, for: other) }
        }
        // A character inside the nonce (near the end the base64 may end in padding bits, which decoding ignores).
        var tampered = Array(sealed)
        let inside = "sealed:v1:old:".count + 4
        tampered[inside] = tampered[inside] == "A" ? "B" : "A"
        #expect { try ring.open(String(tampered), for: .webhookSecret(appId: "app_1")) } throws: {
            ($0 as? SecretKeyring.Failure)?.code == .notAuthentic
        }
    }

    @Test("after a rotation the new key seals and the old key still opens what it sealed; without it, the key id is named")
    func rotation() throws {
        let before = try SecretKeyring(parsing: old)
        let after = try SecretKeyring(parsing: "\(new),\(old)")
        let purpose = SecretPurpose.providerCredentials(appId: "app_1", provider: .apns)
        let sealedBefore = before.seal("{\"privateKey\":\"x\"}", for: purpose)
        #expect(after.activeKeyId == "new-2")
        #expect(try after.openText(sealedBefore, for: purpose) == "{\"privateKey\":\"x\"}")
        #expect(!after.isSealedWithActiveKey(sealedBefore))
        #expect(after.isSealedWithActiveKey(after.seal("x", for: purpose)))
        let withoutOld = try SecretKeyring(parsing: new)
        #expect { try withoutOld.open(sealedBefore, for: purpose) } throws: { error in
            guard let failure = error as? SecretKeyring.Failure else { return false }
            return failure.code == .unknownKey && failure.description.contains("old") && !failure.description.contains("privateKey")
        }
    }

    @Test("a value stored before secrets were sealed is read as it is (storage seals it)")
    func legacyPlaintext() throws {
        let ring = try SecretKeyring(parsing: old)
        #expect(try ring.openText("whsec_plain", for: .webhookSecret(appId: "a")) == "whsec_plain")
        #expect(!ring.isSealedWithActiveKey("whsec_plain"))
    }

    @Test("key lists that are not id:base64-of-32-bytes are refused, naming what is wrong and never the key")
    func invalidKeys() {
        let short = "k:" + Data(repeating: 7, count: 16).base64EncodedString()
        for (text, expected) in [
            ("", "no key"), ("nocolon", "id:base64"), (short, "32 bytes"), ("bad id:\(Data(count: 32).base64EncodedString())", "key id"),
            ("\(old),\(old)", "twice"),
        ] {
            #expect { try SecretKeyring(parsing: text) } throws: { error in
                guard let failure = error as? SecretKeyring.Failure else { return false }
                return failure.code == .invalidKeys && failure.message.contains(expected) && !failure.description.contains(Data(count: 32).base64EncodedString())
            }
        }
        #expect((try? SecretKeyring(parsing: "# comment\n\(old)\n\n\(new)\n"))?.activeKeyId == "old", "a key file: one entry per line, comments")
    }
}
