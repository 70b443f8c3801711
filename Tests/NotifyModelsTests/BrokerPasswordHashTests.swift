import Foundation
import NotifyModels
import Testing

@Suite struct BrokerPasswordHashTests {
    @Test("the hash is RabbitMQ's: it matches the one RabbitMQ made of the local administrator's password (deploy/rabbitmq/definitions.json)")
    func matchesRabbitMQ() throws {
        let made = "BHlDlmVkUKuna1inJjg8DsFksGMU9fVu39DyMOsvMkRzDnPj"
        let salt = Array(try #require(Data(base64Encoded: made)).prefix(4))
        #expect(BrokerPasswordHash.sha256(of: "notify", salt: salt) == made)
        #expect(BrokerPasswordHash.sha256(of: "notify!", salt: salt) != made)
    }

    @Test("each hash has a salt of its own, and none holds the password")
    func saltedEachTime() throws {
        let password = "p4ssw0rd-of-an-app-server"
        let (first, second) = (BrokerPasswordHash.sha256(of: password), BrokerPasswordHash.sha256(of: password))
        #expect(first != second)
        for hash in [first, second] {
            let bytes = try #require(Data(base64Encoded: hash))
            #expect(bytes.count == 36, "4 bytes of salt and 32 of SHA-256")
            #expect(!hash.contains(password) && bytes.range(of: Data(password.utf8)) == nil)
        }
    }
}
