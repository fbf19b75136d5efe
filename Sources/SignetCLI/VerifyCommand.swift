// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify an HTTP message's signature; exit 0 and print `valid` only when it verifies.",
        discussion: """
            Prints `valid` and what was verified, or `invalid: <reason_code>` as the first line and exits 1.
            A message with a body must carry a Content-Digest the signature covers, matching the body.
            --key takes a key file (with --keyid) or a directory of key files named after their key ids.
            """
    )

    @OptionGroup var input: MessageOptions

    @Option(help: "Public key or HMAC secret file (PEM, JWK, base64), or a directory of them.")
    var key: String

    @Option(
        name: [.customLong("keyid"), .customLong("kid")],
        help: "Key id of --key when it is a single file (default: the signature's keyid)."
    )
    var keyid: String?

    @Option(help: "Algorithm of the key (default: from the JWK or the key type).")
    var alg: String?

    @Option(help: "Verification time, Unix seconds (default: now).")
    var now: Int64?

    @Option(help: "Reject a created parameter older than this many seconds.")
    var maxAge: Int64?

    @Option(help: "Tolerated clock skew in seconds.")
    var clockSkew: Int64 = 30

    @Flag(help: "Require a nonce parameter.")
    var requireNonce = false

    @Option(help: "Verify the signature with this label.")
    var label: String?

    @Option(help: "Verify the signature with this tag.")
    var tag: String?

    @Option(name: .customLong("require-component"), help: "A component the signature must cover (repeatable).")
    var requiredComponents: [String] = []

    @Flag(help: "Do not require a covered Content-Digest for a body.")
    var allowUncoveredBody = false

    @Option(help: "For a response: the request file it answers (for ;req components).")
    var responseTo: String?

    @Flag(help: "Print the signature base the verifier built.")
    var debug = false

    func run() async throws {
        let time = Date(timeIntervalSince1970: TimeInterval(now ?? Int64(Date().timeIntervalSince1970)))
        var loaded: HTTPMessage?
        do {
            let (message, _) = try input.load()
            loaded = message
            let related = try responseTo.map(input.loadRelatedRequest)
            var policy = VerificationPolicy.permissive
            policy.requireCreated = true
            policy.requireContentDigest = !allowUncoveredBody
            policy.requireNonce = requireNonce
            policy.maximumAge = maxAge
            policy.clockSkew = clockSkew
            if let label { policy.selection = .label(label) } else if let tag { policy.selection = .tag(tag) }
            if !requiredComponents.isEmpty {
                let components = try requiredComponents.map(ComponentIdentifier.init(parsing:))
                policy.componentRules = [.init(forRequests: message.isRequest, all: components)]
            }
            let keys = try KeyFiles.keyRing(path: key, keyID: keyid, algorithm: alg)
            let verifier = MessageVerifier(keys: keys, policy: policy, nonces: nil, fallbackKeyID: keyid)
            let verified = try await verifier.verify(message, relatedRequest: related, now: time)
            print("valid")
            print("label: \(verified.label)")
            print("keyid: \(verified.keyID)")
            print("alg: \(verified.algorithm)")
            print("components: \(verified.components.map(\.description).joined(separator: " "))")
            if let created = verified.created { print("created: \(Int64(created.timeIntervalSince1970))") }
            if let nonce = verified.nonce { print("nonce: \(nonce)") }
            if let tag = verified.tag { print("tag: \(tag)") }
            if debug { print("signature base:\n\(verified.signatureBase)") }
        } catch let error as SignetError {
            print("invalid: \(error.code)")
            print("reason: \(error.reason)")
            if error.code == .signatureInvalid, let target = loaded?.target {
                // The URL is the usual culprit: say which one was verified, and where the scheme was
                // assumed (a request line carries none), how to verify the other.
                print("verified as: \(target.targetURI)")
                if input.url == nil, target.form == .origin {
                    let other = target.scheme == "https" ? "http" : "https"
                    print("hint: the request line names no scheme, so \(target.scheme) was assumed; if it was signed as \(other)://, pass --scheme \(other)")
                }
            }
            if debug, let base = error.signatureBase { print("signature base:\n\(base)") }
            throw ExitCode(1)
        }
    }
}
