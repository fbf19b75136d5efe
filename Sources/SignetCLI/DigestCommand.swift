// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SignetCore

struct DigestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "digest",
        abstract: "Print the digest of a file or stdin as lowercase hex, or as a Content-Digest field value."
    )

    @Option(help: "md5, sha1, sha256, sha384 or sha512 (sha-256 and SHA-256 too).")
    var alg: String = "sha256"

    @Flag(help: "Print an RFC 9530 Content-Digest value (sha256 or sha512) instead of hex.")
    var contentDigest = false

    @Argument(help: "Input file (stdin when absent).")
    var file: String?

    func run() throws {
        guard let function = HashFunction(rawValue: CLIInput.hashName(alg)) else {
            throw ValidationError("unknown --alg \(alg); one of md5, sha1, sha256, sha384, sha512")
        }
        let bytes = try CLIInput.read(file)
        if contentDigest {
            let algorithm: ContentDigest.Algorithm
            switch function {
            case .sha256: algorithm = .sha256
            case .sha512: algorithm = .sha512
            default:
                throw ValidationError("Content-Digest takes sha256 or sha512 only (RFC 9530 deprecates the others)")
            }
            print(ContentDigest.fieldValue(for: bytes, algorithm: algorithm))
        } else {
            print(function.hex(bytes))
        }
    }
}
