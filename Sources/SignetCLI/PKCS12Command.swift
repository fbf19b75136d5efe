// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetClient
import SignetCore

/// `signet pkcs12`: a device certificate and key as a `.p12` for clients that import only that.
struct PKCS12Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pkcs12",
        abstract: "Export a client certificate chain and its key as PKCS#12 (PBES2 AES-256, HMAC-SHA256).",
        discussion: "The password comes from an environment variable, never from the command line (ps shows that)."
    )

    @Option(help: "Certificate chain (PEM), leaf first.")
    var cert: String

    @Option(help: "The leaf's private key (PEM).")
    var key: String

    @Option(help: "Environment variable holding the export password.")
    var passwordEnv: String = "SIGNET_P12_PASSWORD"

    @Option(help: "The label importers show.")
    var name: String = "Signet device"

    @Option(help: "Output file.")
    var out: String

    func run() async throws {
        guard let password = ProcessInfo.processInfo.environment[passwordEnv], !password.isEmpty else {
            throw ValidationError("set the export password in $\(passwordEnv)")
        }
        let archive = try PKCS12Archive.export(
            chainPEM: try CLIInput.readText(cert),
            privateKeyPEM: try CLIInput.readText(key),
            password: password,
            friendlyName: name
        )
        guard FileManager.default.createFile(atPath: out, contents: Data(archive), attributes: [.posixPermissions: 0o600])
        else { throw ValidationError("cannot write \(out)") }
        print("wrote \(out) (\(archive.count) bytes)")
    }
}
