// SPDX-License-Identifier: Apache-2.0
import Foundation
import HTTPTypes
import SignetMiddleware
import SignetServer

extension FuzzTarget {
    /// What another proxy says about the request it asks about: forward auth's and Envoy's HTTP
    /// form (the first byte even: the path asked on, then `name: value` lines; bit 1, whether a body
    /// came), or Envoy's gRPC `CheckRequest` as bytes (odd).
    static let authorizationQuestion = FuzzTarget(
        "authorization-question",
        property: "a question read is an origin-form request without the asking proxy's fields, and an announced body that did not come is withheld",
        seeds: { vectors in
            [
                [0] + Array("/forward-auth\nX-Forwarded-Method: POST\nX-Forwarded-Uri: /scores?x=1\nX-Forwarded-Host: api.example.test\nContent-Digest: sha-256=:RBNvo1WzZ4oRRq0W9+hknpT7T8If536DEMBg9hyq/4o=:\nX-Forwarded-For: 10.0.0.1, 203.0.113.9".utf8),
                [2] + Array("/ext-authz/scores/1\nx-envoy-auth-partial-body: true\nSignature: sig1=:AAAA:".utf8),
                [1] + (try vectors.bytes("envoy/check-request.binpb")),
                [1] + (try vectors.bytes("envoy/check-request-raw-headers.binpb")),
            ]
        },
        check: { bytes in
            guard let kind = bytes.first else { return }
            if kind % 2 == 1 {
                guard let check = try? EnvoyCheck(checkBytes: Array(bytes.dropFirst())) else { return }
                try expectOrigin(check.head)
                for field in check.head.headerFields {
                    try expect(!field.name.canonicalName.hasPrefix(":") && !AuthorizationQuestion.isAsking(field.name), "\(field.name) reached the request")
                }
                let length = check.head.headerFields[.contentLength]
                try expect(length == (check.bodyByteCount > 0 ? String(check.bodyByteCount) : nil), "length \(length ?? "none") for a \(check.bodyByteCount)-byte body")
                if check.head.headerFields[.init("Content-Digest")!] != nil, check.bodyByteCount == 0 {
                    try expect(check.bodyWithheld, "a digest without its body was not withheld")
                }
                return
            }
            guard let text = text(Array(bytes.dropFirst())) else { return }
            var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            guard !lines.isEmpty else { return }
            let path = lines.removeFirst()
            var fields = HTTPFields()
            for line in lines {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, let name = HTTPField.Name(String(parts[0])) else { continue }
                fields.append(HTTPField(name: name, value: parts[1].trimmingCharacters(in: .whitespaces)))
            }
            let bodyCame = kind & 2 != 0
            let request = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:9001", path: path, headerFields: fields)
            guard let question = try? AuthorizationQuestion(asking: request, bodyCame: bodyCame, trusted: nil) else { return }
            try expectOrigin(question.head)
            for field in question.head.headerFields {
                try expect(!AuthorizationQuestion.isAsking(field.name), "the asking proxy's \(field.name) reached the request")
            }
            if fields[.init("Content-Digest")!] != nil, !bodyCame {
                try expect(question.bodyWithheld, "a digest without its body was not withheld")
            }
        }
    )

    /// A described request names a path (origin form) and an authority.
    private static func expectOrigin(_ head: HTTPRequest) throws {
        try expect(head.path?.hasPrefix("/") == true, "the target \(head.path ?? "none") is not a path")
        try expect(head.authority.map { !$0.isEmpty } == true, "no authority")
    }
}
