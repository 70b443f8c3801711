import Crypto
import Foundation
import Logging
import NIOCore
import NIOSSL
import SwiftASN1
import X509

/// The sandbox's own certificate authority and the TLS server certificate it issues, kept in the
/// state directory: `ca.pem` (what clients trust), `ca-key.pem`, `server.pem`, `server-key.pem`.
///
/// Both are reused across restarts. The server certificate (valid one year) is reissued by the
/// same CA when it nears expiry or lacks a requested name, so a client trusting `ca.pem` keeps
/// working; only an expiring CA (valid ten years) is replaced.
struct TestCertificateAuthority {
    /// A certificate and its private key.
    private struct Issued {
        let certificate: Certificate
        let key: P256.Signing.PrivateKey
    }

    private static let defaultNames = ["localhost", "127.0.0.1", "::1"]
    private static let day: TimeInterval = 24 * 60 * 60

    /// Where the CA certificate clients should trust is.
    let caCertificatePath: String
    private let server: Issued

    /// Loads the CA and server certificate from `directory`, creating or renewing what is missing,
    /// expiring within a day, or (for the server certificate) not covering `extraNames`.
    init(directory: URL, extraNames: [String], logger: Logger) throws {
        let caFiles = (
            certificate: directory.appending(path: "ca.pem"),
            key: directory.appending(path: "ca-key.pem")
        )
        let serverFiles = (
            certificate: directory.appending(path: "server.pem"),
            key: directory.appending(path: "server-key.pem")
        )
        let renewalDate = Date.now.addingTimeInterval(Self.day)
        let names = try Self.subjectAlternativeNames(Self.defaultNames + extraNames)

        let ca: Issued
        if let loaded = try? Self.load(caFiles), loaded.certificate.notValidAfter > renewalDate {
            ca = loaded
        } else {
            ca = try Self.makeCA()
            try Self.save(ca, to: caFiles)
            logger.notice(
                "Created a new test CA: clients must trust the new ca.pem",
                metadata: ["path": "\(caFiles.certificate.path)"]
            )
        }

        if let loaded = try? Self.load(serverFiles),
            loaded.certificate.notValidAfter > renewalDate,
            loaded.certificate.issuer == ca.certificate.subject,
            ca.certificate.publicKey.isValidSignature(loaded.certificate.signature, for: loaded.certificate),
            let existingNames = try? loaded.certificate.extensions.subjectAlternativeNames,
            Set(existingNames).isSuperset(of: names)
        {
            server = loaded
        } else {
            server = try Self.makeServerCertificate(names: names, issuer: ca)
            try Self.save(server, to: serverFiles)
            logger.info("Issued a new server certificate", metadata: ["path": "\(serverFiles.certificate.path)"])
        }
        caCertificatePath = caFiles.certificate.path
    }

    /// Server-side TLS (1.2 or later) presenting the server certificate.
    func tlsConfiguration() throws -> TLSConfiguration {
        let certificatePEM = try server.certificate.serializeAsPEM().pemString
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(server.key.pemRepresentation.utf8), format: .pem))
        )
        configuration.minimumTLSVersion = .tlsv12
        // Closing, wait at most a second for the client's close_notify after ours: a client that half-closed with
        // a bare FIN sends none, and its connection would sit in CLOSE-WAIT for the default 5 seconds.
        configuration.shutdownTimeout = .seconds(1)
        return configuration
    }

    private static func makeCA() throws -> Issued {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let name = try DistinguishedName {
            OrganizationName("notify provider-sandbox")
            CommonName("Provider Sandbox Test CA")
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: Date.now.addingTimeInterval(-Self.day),
            notValidAfter: Date.now.addingTimeInterval(3650 * Self.day),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
        return Issued(certificate: certificate, key: key)
    }

    private static func makeServerCertificate(names: [GeneralName], issuer: Issued) throws -> Issued {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: publicKey,
            notValidBefore: Date.now.addingTimeInterval(-Self.day),
            notValidAfter: Date.now.addingTimeInterval(365 * Self.day),
            issuer: issuer.certificate.subject,
            subject: try DistinguishedName {
                OrganizationName("notify provider-sandbox")
                CommonName("localhost")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names)
                SubjectKeyIdentifier(hash: publicKey)
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: issuer.certificate.publicKey).keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(issuer.key)
        )
        return Issued(certificate: certificate, key: key)
    }

    /// IP addresses become IP-address names, anything else a DNS name.
    private static func subjectAlternativeNames(_ names: [String]) throws -> [GeneralName] {
        try names.map { name in
            switch try? SocketAddress(ipAddress: name, port: 0) {
            case .v4(let address):
                var ip = address.address.sin_addr
                return .ipAddress(ASN1OctetString(contentBytes: withUnsafeBytes(of: &ip) { Array($0) }[...]))
            case .v6(let address):
                var ip = address.address.sin6_addr
                return .ipAddress(ASN1OctetString(contentBytes: withUnsafeBytes(of: &ip) { Array($0) }[...]))
            case .unixDomainSocket, nil:
                guard !name.isEmpty, !name.contains(where: \.isWhitespace) else {
                    throw CertificateSetupError(description: "--tls-name '\(name)' is neither a DNS name nor an IP address")
                }
                return .dnsName(name)
            }
        }
    }

    private static func load(_ files: (certificate: URL, key: URL)) throws -> Issued {
        let certificate = try Certificate(pemEncoded: String(contentsOf: files.certificate, encoding: .utf8))
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: files.key, encoding: .utf8))
        guard certificate.publicKey == Certificate.PublicKey(key.publicKey) else {
            throw CertificateSetupError(description: "\(files.key.path) does not match \(files.certificate.path)")
        }
        return Issued(certificate: certificate, key: key)
    }

    /// Writes the certificate, and the private key readable by its owner only.
    private static func save(_ issued: Issued, to files: (certificate: URL, key: URL)) throws {
        try issued.certificate.serializeAsPEM().pemString.write(to: files.certificate, atomically: true, encoding: .utf8)
        guard FileManager.default.createFile(
            atPath: files.key.path,
            contents: Data(issued.key.pemRepresentation.utf8),
            attributes: [.posixPermissions: 0o600]
        ) else {
            throw CertificateSetupError(description: "cannot write \(files.key.path)")
        }
    }
}

/// Why the certificates could not be set up.
struct CertificateSetupError: Error, CustomStringConvertible {
    let description: String
}
