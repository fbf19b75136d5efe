// SPDX-License-Identifier: Apache-2.0
import SignetCore

extension FuzzTarget {
    /// `Authorization` (the first byte even) and `WWW-Authenticate` (odd): Basic and Digest.
    static let httpAuthentication = FuzzTarget(
        "http-authentication",
        property: "credentials and challenges that parse write field values that parse to the same credentials and challenges",
        seeds: { vectors in
            let object = try vectors.object("rfc7616-digest.json")
            let digest = (object["vectors"] as? [[String: Any]]) ?? []
            let basic = (object["basic_vectors"] as? [[String: Any]]) ?? []
            return (digest + basic).compactMap { $0["authorization"] as? String }.map { [0] + Array($0.utf8) }
                + digest.compactMap { $0["challenge"] as? String }.map { [1] + Array($0.utf8) }
        },
        check: { bytes in
            guard let kind = bytes.first, let value = text(Array(bytes.dropFirst())) else { return }
            if kind % 2 == 1 {
                guard let challenges = try? HTTPAuthentication.challenges([value]) else { return }
                for challenge in challenges {
                    try roundTrip(challenge)
                    if let digest = try? DigestChallenge(challenge) {
                        let again = try reparsed(digest.fieldValue) { try DigestChallenge(HTTPAuthentication(credentials: $0)) }
                        try expect(again == digest, "the challenge \(value.debugDescription) writes \(digest.fieldValue.debugDescription), read as \(again)")
                    }
                }
                return
            }
            guard let credentials = try? HTTPAuthentication(credentials: value) else { return }
            try roundTrip(credentials)
            if let basic = try? BasicCredentials(credentials) {
                let again = try reparsed(basic.fieldValue) { try BasicCredentials(HTTPAuthentication(credentials: $0)) }
                try expect(again == basic, "Basic \(value.debugDescription) writes \(basic.fieldValue.debugDescription), read as \(again)")
            }
            if let digest = try? DigestCredentials(credentials) {
                let again = try reparsed(digest.fieldValue) { try DigestCredentials(HTTPAuthentication(credentials: $0)) }
                try expect(again == digest, "Digest \(value.debugDescription) writes \(digest.fieldValue.debugDescription), read as \(again)")
            }
        }
    )
}

/// A parsed scheme with its token68 or parameters (all quoted) written again reads the same.
private func roundTrip(_ parsed: HTTPAuthentication) throws {
    let written =
        if let token68 = parsed.token68 {
            parsed.scheme + " " + token68
        } else {
            HTTPAuthentication.fieldValue(scheme: parsed.scheme, parsed.parameters.map { HTTPAuthentication.Parameter($0.name, $0.value) })
        }
    let again = try reparsed(written) { try HTTPAuthentication(credentials: $0) }
    try expect(again == parsed, "\(parsed) writes \(written.debugDescription), which reads as \(again)")
}
