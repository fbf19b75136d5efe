// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SignetCore
import SwiftASN1
import X509

struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI SHA-256 pin of each certificate in a file or served by a TLS server.",
        discussion: """
            One line per certificate: `sha256/<base64>` then the subject. Any key type (RSA, EC, Ed25519).             With --host, the served chain leaf first, then a suggested pin set with a backup pin.
            """
    )

    @Option(help: "Certificate file: PEM (one or more certificates) or DER.")
    var cert: String?

    @Option(help: "HOST:PORT of a TLS server whose served chain to pin (not validated: inspection only).")
    var host: String?

    @Option(help: "A spare key (PEM) kept offline, whose pin becomes the suggested backup.")
    var backupKey: String?

    func run() async throws {
        if let host {
            guard let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]) else {
                throw ValidationError("--host is HOST:PORT")
            }
            let chain = try await ServedChain.fetch(host: String(host[..<colon]), port: port)
            guard !chain.isEmpty else { throw ValidationError("the server sent no certificate") }
            let pins = try print(chain)
            var suggestion = pins.count > 1 ? [pins[1], pins[0]] : [pins[0]]
            if let backupKey {
                let key = try VerificationKey(pem: try CLIInput.readText(backupKey))
                suggestion.append(SPKIPin(spkiDER: key.spkiDER ?? []))
            }
            Swift.print("\nsuggested pin set for \(host[..<colon]) (positions leaf, intermediate):")
            for pin in suggestion { Swift.print("  \(pin)") }
            if backupKey == nil {
                Swift.print("  + a backup pin: the pin of a spare key kept offline (--backup-key FILE)")
            }
            return
        }
        guard let cert else { throw ValidationError("give --cert FILE or --host HOST:PORT") }
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
        _ = try print(ders)
    }

    /// Prints `sha256/<base64> <subject>` per certificate; returns the pins.
    private func print(_ ders: [[UInt8]]) throws -> [SPKIPin] {
        try ders.map { der in
            let pin = try SPKIPin(certificateDER: der)
            let subject = (try? Certificate(derEncoded: der)).map { String(describing: $0.subject) } ?? "?"
            Swift.print("\(pin) \(subject)")
            return pin
        }
    }
}
