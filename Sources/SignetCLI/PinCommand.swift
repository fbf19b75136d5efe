// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SignetCore
import SwiftASN1
import X509

struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI SHA-256 pin of each certificate in a PEM or DER file.",
        discussion: "One line per certificate: `sha256/<base64>` then the subject. Any key type (RSA, EC, Ed25519)."
    )

    @Option(help: "Certificate file: PEM (one or more certificates) or DER.")
    var cert: String

    func run() throws {
        let bytes = try CLIInput.read(cert)
        let text = String(decoding: bytes, as: UTF8.self)
        var ders: [[UInt8]]
        if text.contains("-----BEGIN") {
            ders = try PEMDocument.parseMultiple(pemString: text).filter { $0.discriminator == "CERTIFICATE" }.map(
                \.derBytes
            )
        } else {
            ders = [bytes]
        }
        guard !ders.isEmpty else { throw ValidationError("\(cert) holds no certificate") }
        for der in ders {
            let pin = try SPKIPin(certificateDER: der)
            let subject = (try? Certificate(derEncoded: der)).map { String(describing: $0.subject) } ?? "?"
            print("\(pin) \(subject)")
        }
    }
}
