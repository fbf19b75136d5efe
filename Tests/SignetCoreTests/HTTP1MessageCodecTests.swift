// SPDX-License-Identifier: Apache-2.0
import Foundation
import Testing

@testable import SignetCore

@Suite struct HTTP1MessageCodecTests {
    @Test(arguments: ["\r\n", "\n"])
    func requestsParseWithEitherLineEnding(_ eol: String) throws {
        let text = [
            "POST /a/b?x=1 HTTP/1.1", "Host: Example.COM:443", "X-Fold: one", "  two", "Content-Length: 2", "", "hi",
        ]
        .joined(separator: eol)
        let message = try HTTP1MessageCodec().decode(Array(text.utf8))
        #expect(message.method == "POST")
        #expect(message.target?.targetURI == "https://Example.COM:443/a/b?x=1")
        #expect(message.target?.normalizedAuthority == "example.com")
        #expect(message.fields["x-fold"] == "one two")
        #expect(message.body == Array("hi".utf8))
        // Written back and read again, it is the same message.
        let again = try HTTP1MessageCodec().decode(HTTP1MessageCodec().encode(message, lineEnding: eol))
        #expect(again == message)
    }

    /// Found by the `http1-message` fuzz target (each was read, then written as another message).
    @Test(arguments: [
        "POST =c HTTP/1.1\r\nX: 1\r\n\r\n",  // authority form without CONNECT, and no Host
        "GET /a HTTP/1.1\r\nX: 1\r\n\r\n",  // origin form without Host
        "POST example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",  // authority form for POST
        "GET https://example.com@evil.example/ HTTP/1.1\r\n\r\n",  // userinfo
        "HTTP/1.1 +20 OK\r\n\r\n", "HTTP/1.1 -01 X\r\n\r\n",  // a sign in the status
        "HTTP/1.1 043 OK\r\n\r\n", "HTTP/1.1 600 X\r\n\r\n",  // outside 100-599
    ])
    func messagesTheRFCDoesNotAllowAreRefused(_ text: String) {
        #expect(throws: SignetError.self) { try HTTP1MessageCodec().decode(Array(text.utf8)) }
    }

    /// Found by the `http1-message` fuzz target: a fold onto an empty value kept a leading space,
    /// which the next read trimmed.
    @Test func aFoldOntoAnEmptyValueAddsNoSpace() throws {
        let message = try HTTP1MessageCodec().decode(Array("GET /a HTTP/1.1\r\nHost: h\r\nX:\r\n  1 folded\r\nY: a\r\n \r\n\r\n".utf8))
        #expect(message.fields["x"] == "1 folded" && message.fields["y"] == "a")
        #expect(try HTTP1MessageCodec().decode(HTTP1MessageCodec().encode(message)) == message)
    }

    @Test func connectAndAnEmptyAbsolutePathAreReadAsTheyAreWritten() throws {
        let connect = try HTTP1MessageCodec().decode(Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n".utf8))
        #expect(connect.target?.form == .authority)
        let empty = try HTTP1MessageCodec().decode(Array("GET https://example.com HTTP/1.1\r\n\r\n".utf8))
        #expect(empty.target?.path == "/")
        #expect(try HTTP1MessageCodec().decode(HTTP1MessageCodec().encode(empty)) == empty)
    }

    @Test func absoluteFormResponsesAndATrailingEditorNewline() throws {
        let absolute = try HTTP1MessageCodec().decode(Array("GET http://h:8080/p HTTP/1.1\n\n".utf8))
        #expect(absolute.target?.normalizedAuthority == "h:8080")
        #expect(absolute.target?.requestTargetValue == "http://h:8080/p")
        let response = try HTTP1MessageCodec().decode(
            Array("HTTP/1.1 503 Service Unavailable\nContent-Length: 2\n\nok\n".utf8)
        )
        #expect(response.head == .response(status: 503))
        #expect(response.body == Array("ok".utf8))
        var codec = HTTP1MessageCodec()
        codec.defaultScheme = "http"
        #expect(try codec.decode(Array("GET / HTTP/1.1\nHost: h:80\n\n".utf8)).target?.normalizedAuthority == "h")
    }

    @Test(arguments: [
        "", "GET\n\n", "GET / HTTP/1.1\n\n", "GET / HTTP/1.1\nHost h\n\n", "GET / HTTP/1.1\n folded-first\n\n",
        "HTTP/1.1 20 OK\n\n", "POST / HTTP/1.1\nHost: h\nContent-Length: 9\n\nshort",
        "POST / HTTP/1.1\nHost: h\nContent-Length: x\n\n",
        "GET / HTTP/1.1\nHost: h\nBad Name: v\n\n",
    ])
    func malformedMessagesAreRejected(_ text: String) {
        let error = #expect(throws: SignetError.self) { try HTTP1MessageCodec().decode(Array(text.utf8)) }
        #expect(error?.code == .malformedMessage)
    }

    @Test func bodiesAreBounded() throws {
        var codec = HTTP1MessageCodec()
        codec.maximumBodyBytes = 4
        #expect(try codec.decode(Array("POST / HTTP/1.1\nHost: h\n\n1234".utf8)).body.count == 4)
        let error = #expect(throws: SignetError.self) {
            try codec.decode(Array("POST / HTTP/1.1\nHost: h\n\n12345".utf8))
        }
        #expect(error?.code == .bodyTooLarge)
    }
}
