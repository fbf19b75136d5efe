// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

/// `signet ohttp`: Oblivious HTTP tools for debugging.
struct ObliviousCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ohttp",
        abstract: "Oblivious HTTP tools.",
        subcommands: [Open.self]
    )

    /// `signet ohttp open --key FILE [FILE]`: a captured `message/ohttp-req` as readable text.
    struct Open: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "open",
            abstract: "Decapsulate a captured encapsulated request and print the Binary HTTP message inside.",
            discussion: """
                Reads the request (binary, as sent with Content-Type message/ohttp-req) from FILE or standard \
                input, opens it with the gateway key in --key (the key id is taken from the request's header) and \
                prints the request line, the header fields and the body. Exit status 1 when it does not open.
                """
        )

        @Option(help: "The gateway's OHTTP private key (PEM, as `signet keygen --alg hpke-*` writes it).")
        var key: String

        @Argument(help: "The encapsulated request (default: standard input).")
        var file: String?

        func run() throws {
            let privateKey: OHTTPGatewayKey.PrivateKey
            do {
                privateKey = try OHTTPGatewayKey.PrivateKey(pem: try CLIInput.readText(key))
            } catch let error as SignetError {
                throw ValidationError("--key: \(error.reason)")
            }
            let bytes = try CLIInput.read(file ?? "-")
            do {
                guard let keyID = bytes.first else { throw SignetError(.decapsulationFailed, "the input is empty") }
                let opened = try ObliviousRequest(
                    decapsulating: bytes,
                    keys: [OHTTPGatewayKey(keyID: keyID, privateKey: privateKey)]
                )
                let message = try BinaryHTTPMessage(decoding: opened.message)
                var text = ""
                switch message.head {
                case .request(let method, let scheme, let authority, let path):
                    text += "\(method) \(scheme)://\(authority)\(path)\n"
                case .response(let status):
                    text += "\(status)\n"
                }
                for field in message.fields { text += "\(field.name): \(field.value)\n" }
                text += "\n"
                StandardOutput.write(Data(text.utf8) + Data(message.content))
            } catch let error as SignetError {
                FileHandle.standardError.write(Data("signet: \(error.code): \(error.reason)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
