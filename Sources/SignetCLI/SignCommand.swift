// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Sign an HTTP message (RFC 9421) and print it, its new header fields, or a curl command.",
        discussion: """
            Default components: @method @target-uri for a request, @status for a response, plus \
            content-digest when there is a body (the Content-Digest field is added when missing).
            Example: signet sign --request req.http --key device.key.pem --keyid device-1 --nonce
            """
    )

    @OptionGroup var input: MessageOptions

    @Option(help: "Private key: PEM, JWK, or a file holding a base64 HMAC secret.")
    var key: String

    @Option(name: [.customLong("keyid"), .customLong("kid")], help: "The keyid parameter.")
    var keyid: String

    @Option(help: "Algorithm (default: from the key type; RSA keys use rsa-pss-sha512).")
    var alg: String?

    @Flag(help: "Also name the algorithm in the alg parameter.")
    var includeAlg = false

    @Option(
        name: .customLong("component"),
        help: "A covered component, e.g. @authority or '\"@query-param\";name=\"id\"' (repeatable)."
    )
    var components: [String] = []

    @Flag(help: "Add a random nonce.")
    var nonce = false

    @Option(help: "Use this nonce.")
    var nonceValue: String?

    @Option(help: "The created parameter, Unix seconds (default: now).")
    var created: Int64?

    @Option(help: "The expires parameter, Unix seconds.")
    var expires: Int64?

    @Option(help: "The tag parameter.")
    var tag: String?

    @Option(help: "The signature label.")
    var label: String = "sig1"

    @Option(help: "Content-Digest algorithm: sha-256 or sha-512.")
    var digest: String = "sha-256"

    @Option(help: "For a response covering ;req components: the request file it answers.")
    var responseTo: String?

    @Flag(help: "Print only the header fields to add.")
    var headersOnly = false

    @Flag(help: "Print a curl command line that sends the signed request.")
    var curl = false

    func run() throws {
        var (message, lineEnding) = try input.load()
        // An HTTP/1.1 message with a body needs framing; the file form relies on Content-Length.
        if !message.body.isEmpty, !message.fields.contains("content-length"),
            !message.fields.contains("transfer-encoding")
        {
            message.fields.append(name: "Content-Length", value: String(message.body.count))
        }
        let signingKey = try KeyFiles.signingKey(path: key)
        let algorithm = try SignatureAlgorithms.standard.require(alg ?? signingKey.type.defaultAlgorithm)
        guard let digestAlgorithm = ContentDigest.Algorithm.allCases.first(where: { CLIInput.hashName($0.rawValue) == CLIInput.hashName(digest) }) else {
            throw ValidationError("--digest is sha-256 or sha-512 (sha256, sha512 too)")
        }
        let signer = MessageSigner(
            key: signingKey,
            keyID: keyid,
            algorithm: algorithm,
            includeAlgorithm: includeAlg,
            digestAlgorithm: digestAlgorithm
        )
        let related = try responseTo.map(input.loadRelatedRequest)
        let signed = try signer.sign(
            message,
            label: label,
            components: components.isEmpty ? nil : try components.map(ComponentIdentifier.init(parsing:)),
            created: Date(timeIntervalSince1970: TimeInterval(created ?? Int64(Date().timeIntervalSince1970))),
            expires: expires.map { Date(timeIntervalSince1970: TimeInterval($0)) },
            nonce: nonceValue ?? (nonce ? Nonce.random() : nil),
            tag: tag,
            relatedRequest: related
        )
        if headersOnly {
            for field in signed.fields.lines.dropFirst(message.fields.lines.count) {
                print("\(field.name): \(field.value)")
            }
        } else if curl {
            print(CurlCommand(signed).text)
        } else {
            StandardOutput.write(Data(HTTP1MessageCodec().encode(signed, lineEnding: lineEnding)))
        }
    }
}

/// A curl command line equivalent to a request.
struct CurlCommand {
    let text: String

    init(_ message: HTTPMessage) {
        guard case .request(let method, let target) = message.head else {
            text = "# a response cannot be sent with curl"
            return
        }
        var parts = ["curl", "-X", Self.quote(method), Self.quote(target.targetURI)]
        for field in message.fields where !["host", "content-length"].contains(field.name.lowercased()) {
            parts += ["-H", Self.quote("\(field.name): \(field.value)")]
        }
        if !message.body.isEmpty {
            parts += ["--data-binary", Self.quote(String(decoding: message.body, as: UTF8.self))]
        }
        text = parts.joined(separator: " ")
    }

    /// POSIX shell single quoting.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
