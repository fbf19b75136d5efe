// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SignetCore
import SignetMiddleware
import SignetTrust

/// `GET /signet/v1/trust`: the operator's signed trust document, for apps to update their pins
/// (and keys) over a connection their current pins accept. Checked at start: a document that has
/// expired, or that does not pin the certificate this gateway serves, would strand the apps that
/// take it, so the gateway refuses to start (or reload) with one: a ``ConfigurationError`` at
/// `trustDocument.file`.
struct TrustDocumentRoute: Sendable {
    let jws: String
    let etag: String
    /// When the served document expires (the operator console warns ahead of it).
    let expires: Date
    let version: Int
    /// What the document says: the same document signed again is the same.
    let content: SignetTrust.TrustDocument

    /// Reads and checks the document.
    ///
    /// - Parameters:
    ///   - file: The compact JWS.
    ///   - servedChain: The TLS chain this gateway serves (DER, leaf first); `nil` without TLS.
    ///   - host: The host apps reach the gateway by, to pick the pin sets that apply.
    ///   - now: The start time.
    init(file: String, servedChain: [[UInt8]]?, host: String?, now: Date) throws {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConfigurationError(.file, at: "trustDocument.file", "cannot read the trust document \(file)")
        }
        let jws = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        guard parts.count == 3, let payload = Base64.urlDecode(String(parts[1])),
            let document = try? decoder.decode(SignetTrust.TrustDocument.self, from: Data(payload))
        else { throw Self.refusal("\(file) is not a compact JWS of a trust document") }
        guard now < document.expires else {
            throw Self.refusal("the trust document \(file) expired at \(document.expires)")
        }
        let pinSets: [PinSet]
        do {
            pinSets = try document.pinSetValues()
        } catch let error as SignetError {
            throw Self.refusal("the trust document \(file): \(error.reason)")
        }
        if let servedChain {
            let served = Set(try servedChain.map { try SPKIPin(certificateDER: $0) })
            let applicable = host.map { host in pinSets.filter { $0.pattern.matches(host) } } ?? pinSets
            guard applicable.contains(where: { !$0.pins.isDisjoint(with: served) }) else {
                throw Self.refusal(
                    "the trust document \(file) pins none of the certificates this gateway serves\(host.map { " for \($0)" } ?? "")"
                )
            }
        }
        self.jws = jws
        self.content = document
        self.expires = document.expires
        self.version = document.version
        self.etag = "\"" + SHA256.hash(data: Array(jws.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined() + "\""
    }

    private static func refusal(_ message: String) -> ConfigurationError {
        ConfigurationError.invalid("trustDocument.file", "trustDocument.file: \(message)")
    }

    func add(to router: Router<some SignetRequestContextProtocol>) {
        let jws = self.jws
        let etag = self.etag
        router.get("/signet/v1/trust") { request, _ -> Response in
            var headers = HTTPFields()
            headers[.eTag] = etag
            headers[.cacheControl] = "max-age=300"
            if IfNoneMatch.matches(request.headers[values: .ifNoneMatch], etag: etag) {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] = "application/jose"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: jws)))
        }
    }
}
