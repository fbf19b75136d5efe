// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SignetCore

struct HMACCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hmac",
        abstract: "Print HMAC-SHA256 of a file or stdin as lowercase hex (the seed articles' MAC format)."
    )

    @Option(help: "The key as UTF-8 text.")
    var keyUtf8: String?

    @Option(help: "The key as base64 (decoded before use).")
    var keyB64: String?

    @Option(help: "Instead of printing, compare with this hex MAC (constant time); exit 1 when it differs.")
    var verify: String?

    @Argument(help: "Input file (stdin when absent).")
    var file: String?

    func run() throws {
        let key: [UInt8]
        switch (keyUtf8, keyB64) {
        case (let text?, nil): key = Array(text.utf8)
        case (nil, let b64?):
            guard let bytes = Base64.decode(b64) ?? Base64.urlDecode(b64) else {
                throw ValidationError("--key-b64 is not base64")
            }
            key = bytes
        default: throw ValidationError("give exactly one of --key-utf8 and --key-b64")
        }
        let mac = HMACHex.sha256(key: key, message: try CLIInput.read(file))
        guard let expected = verify else {
            print(mac)
            return
        }
        guard let received = Hex.decode(expected), ConstantTime.equals(received, Hex.decode(mac)!) else {
            print("invalid: signature_invalid")
            throw ExitCode(1)
        }
        print("valid")
    }
}
