// SPDX-License-Identifier: Apache-2.0
import SignetCore
import Testing

@testable import SignetServer

/// The upstream URL, read once at start by the gateway's own parser, and the request targets it makes.
@Suite struct UpstreamOriginTests {
    @Test(arguments: [
        ("http://127.0.0.1:9000", UpstreamOrigin.Scheme.http, "127.0.0.1", 9000, "", "127.0.0.1:9000"),
        ("https://API.example.com", .https, "api.example.com", 443, "", "api.example.com"),
        ("http://backend/api/", .http, "backend", 80, "/api", "backend"),
        ("http://[2001:db8::1]:8080/v1", .http, "2001:db8::1", 8080, "/v1", "[2001:db8::1]:8080"),
        ("HTTP://backend:80//", .http, "backend", 80, "", "backend"),
    ])
    func upstreamsParse(_ url: String, _ scheme: UpstreamOrigin.Scheme, _ host: String, _ port: Int, _ base: String, _ authority: String)
        throws
    {
        let origin = try UpstreamOrigin(parsing: url)
        #expect(origin.scheme == scheme && origin.host == host && origin.port == port && origin.basePath == base)
        #expect(origin.authority == authority)
        #expect(origin.requestTarget(routedTarget: "/a/%C3%A9?x=%FF") == base + "/a/%C3%A9?x=%FF")
    }

    @Test(arguments: [
        "ftp://backend", "backend:80", "http://", "http://user:pw@backend", "http://backend?x=1", "http://backend/#f",
        "http://backend:0", "http://backend:65536", "http://backend:8x", "http://[2001:db8::1", "http://[zz]/",
        "http://back end/", "http://backend/a/../b", "http://backend/a;x", "http://backend/%2F", "http://backend/a//b",
    ])
    func malformedUpstreamsAreRefused(_ url: String) {
        let error = #expect(throws: ConfigurationError.self, "\(url)") { try UpstreamOrigin(parsing: url) }
        #expect(error?.path == "upstream" && error?.kind == .invalidValue, "\(String(describing: error))")
    }
}
