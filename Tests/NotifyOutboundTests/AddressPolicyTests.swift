import NotifyOutbound
import Testing

/// The address classes and the policy's answers, on addresses of every class and their IPv6 forms.
@Suite struct AddressPolicyTests {
    /// A resolver answering from a table: names that resolve where an attacker wants them to.
    struct TableResolver: HostResolving {
        var table: [String: [String]]
        func addresses(of host: String) async -> [IPAddress] { (table[host] ?? []).compactMap { IPAddress($0) } }
    }

    @Test("each address is of its class", arguments: [
        ("8.8.8.8", AddressClass.global), ("2606:4700:4700::1111", .global), ("1.1.1.1", .global),
        ("127.0.0.1", .loopback), ("127.1.2.3", .loopback), ("::1", .loopback),
        ("10.0.0.1", .private), ("172.16.0.1", .private), ("172.31.255.255", .private), ("192.168.1.1", .private),
        ("172.32.0.1", .global), ("11.0.0.1", .global),
        ("169.254.1.1", .linkLocal), ("fe80::1", .linkLocal), ("febf::1", .linkLocal),
        ("100.64.0.1", .sharedAddressSpace), ("100.127.255.255", .sharedAddressSpace), ("100.128.0.1", .global),
        ("fc00::1", .uniqueLocal), ("fd12:3456::1", .uniqueLocal), ("fec0::1", .uniqueLocal),
        ("224.0.0.1", .multicast), ("239.255.255.250", .multicast), ("ff02::1", .multicast),
        ("0.0.0.0", .unspecified), ("0.1.2.3", .unspecified), ("::", .unspecified),
        ("169.254.169.254", .cloudMetadata), ("fd00:ec2::254", .cloudMetadata), ("100.100.100.200", .cloudMetadata),
        ("169.254.170.2", .cloudMetadata), ("192.0.0.192", .cloudMetadata),
        ("255.255.255.255", .reserved), ("240.0.0.1", .reserved), ("192.0.2.1", .reserved), ("198.18.0.1", .reserved),
        ("2001:db8::1", .reserved),
        // IPv4 written as IPv6: mapped, compatible, NAT64 and 6to4 are their IPv4's class.
        ("::ffff:127.0.0.1", .loopback), ("::ffff:7f00:1", .loopback), ("::ffff:169.254.169.254", .cloudMetadata),
        ("::ffff:10.1.2.3", .private), ("::127.0.0.1", .loopback), ("64:ff9b::10.0.0.1", .private), ("2002:7f00:1::", .loopback),
        ("::ffff:8.8.8.8", .global), ("2002:0808:0808::1", .global),
    ])
    func classes(_ text: String, _ expected: AddressClass) throws {
        let address = try #require(IPAddress(text))
        #expect(AddressClass(address) == expected, "\(text)")
    }

    @Test("text that is not an address is not one")
    func notAddresses() {
        for text in ["localhost", "1.2.3", "256.0.0.1", "::g", "", "example.com", "[::1"] {
            #expect(IPAddress(text) == nil, "\(text)")
        }
        #expect(IPAddress("[::1]")?.description == "::1")
    }

    @Test("URLs naming a refused address are refused, by name or by number, whatever the spelling")
    func refusedURLs() async throws {
        let policy = OutboundPolicy(resolver: TableResolver(table: [
            "localhost": ["127.0.0.1", "::1"], "rebind.example": ["127.0.0.1"], "public.example": ["93.184.215.14"],
            "mixed.example": ["10.0.0.5", "93.184.215.14"], "2130706433": ["127.0.0.1"],
        ]))
        for url in [
            "http://127.0.0.1/x", "http://127.0.0.2:8080/", "http://[::1]:22090/", "https://localhost/", "http://rebind.example/",
            "http://169.254.169.254/latest/meta-data/", "http://[::ffff:127.0.0.1]/", "http://10.0.0.1/", "http://[fd00::1]/",
            "http://100.64.1.1/", "http://0.0.0.0:22090/", "http://2130706433/", "http://LOCALHOST./",
        ] {
            let refusal = await #expect(throws: OutboundRefusal.self, "\(url)") { try await policy.destination(of: url) }
            #expect(refusal?.code == .forbiddenAddress, "\(url): refused for its address, not for another reason")
        }
        for (url, code) in [("https://nowhere.example/", OutboundRefusal.Code.unresolvable), ("ftp://example.com/", .unsupportedURL)] {
            let refusal = await #expect(throws: OutboundRefusal.self) { try await policy.destination(of: url) }
            #expect(refusal?.code == code, "\(url)")
        }
        let publicDestination = try? await policy.destination(of: "https://public.example/hook")
        #expect(publicDestination?.address == IPAddress("93.184.215.14") && publicDestination?.port == 443)
        // A name with a refused and a public address connects to the public one.
        #expect(try await policy.destination(of: "http://mixed.example/").address == IPAddress("93.184.215.14"))
    }

    @Test("the refusal names the host and the class, never the path or query")
    func refusalText() async {
        let policy = OutboundPolicy(resolver: TableResolver(table: [:]))
        do {
            _ = try await policy.destination(of: "http://169.254.169.254/latest?token=secret-value")
            Issue.record("a metadata address was admitted")
        } catch {
            #expect(error.description == "the host 169.254.169.254 is a cloud metadata address, which the service does not call on an app's behalf")
        }
    }

    @Test("the allowance admits named hosts and ranges at their ports only")
    func allowance() async throws {
        let allowance = try OutboundAllowance(parsing: "localhost:22444, 127.0.0.1:22090,[::1]:9000, 10.1.0.0/16:*")
        #expect(allowance.description == "localhost:22444,127.0.0.1:22090,[::1]:9000,10.1.0.0/16:*")
        let policy = OutboundPolicy(allowance: allowance, resolver: TableResolver(table: ["localhost": ["127.0.0.1", "::1"], "rebind.example": ["127.0.0.1"]]))
        #expect(try await policy.destination(of: "https://localhost:22444/wns").address == IPAddress("127.0.0.1"))
        #expect(try await policy.destination(of: "http://127.0.0.1:22090/receivers/a").port == 22090)
        #expect(try await policy.destination(of: "http://[::1]:9000/").address == IPAddress("::1"))
        #expect(try await policy.destination(of: "http://10.1.200.3:1234/").address == IPAddress("10.1.200.3"))
        // A name resolving to an admitted address and port is admitted as that address.
        #expect(try await policy.destination(of: "http://rebind.example:22090/").address == IPAddress("127.0.0.1"))
        for url in ["https://localhost:22445/", "http://127.0.0.1:22091/", "http://127.0.0.2:22090/", "http://10.2.0.1/", "http://[::1]:9001/"] {
            await #expect(throws: OutboundRefusal.self, "\(url)") { try await policy.destination(of: url) }
        }
    }

    @Test("a malformed allowance entry is named", arguments: ["localhost", "localhost:0", "::1:80", "10.0.0.0/33:80", "bad host:80", "[example]:80"])
    func malformedAllowance(_ text: String) {
        #expect(throws: OutboundAllowanceError.self) { try OutboundAllowance(parsing: text) }
    }

    @Test("push endpoints only at the push services or a host the operator names")
    func pushHosts() throws {
        let allowance = try OutboundAllowance(parsing: "localhost:22444")
        for url in ["https://wns2-by3p.notify.windows.com/w/?token=abc", "https://db5.notify.windows.com/?token=1"] {
            try PushServiceHosts.check(url, for: .wns, allowance: allowance)
        }
        for url in [
            "https://fcm.googleapis.com/fcm/send/abc", "https://updates.push.services.mozilla.com/wpush/v2/abc",
            "https://web.push.apple.com/QGx", "https://wns2-bl2p.notify.windows.com/w/?token=x", "https://localhost:22444/webpush/1",
        ] {
            try PushServiceHosts.check(url, for: .webPush, allowance: allowance)
        }
        for (url, service) in [
            ("https://attacker.example/x", PushServiceHosts.Service.wns), ("https://notify.windows.com.attacker.example/", .wns),
            ("https://evilnotify.windows.com/", .wns), ("http://db5.notify.windows.com/", .wns), ("https://db5.notify.windows.com:8443/", .wns),
            ("https://fcm.googleapis.com/fcm/send/abc", .wns), ("https://localhost:22445/", .wns), ("https://127.0.0.1:22444/", .wns),
            ("https://attacker.example/push", .webPush), ("https://fcm.googleapis.com.attacker.example/", .webPush),
            ("https://push.apple.com.example/", .webPush),
        ] {
            #expect(throws: OutboundRefusal.self, "\(url)") { try PushServiceHosts.check(url, for: service, allowance: allowance) }
        }
    }
}
