// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetSimulator

/// `signet simulator-ca`: the development attestation CA an app's debug builds attest with
/// (`SimulatedAppAttestService`, where App Attest does not run: the iOS simulator, CI) and a
/// development gateway trusts, as Firebase App Check's debug provider pairs with its console.
struct SimulatorCACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator-ca",
        abstract: "Make a development App Attest CA: its root for a gateway, its keys for an app's debug builds.",
        discussion: """
            Writes attestation-root.pem (give it to a development gateway as appAttest.trustedRootsFile, \
            with allowDevelopment; the gateway takes it only with development: true) and attestation-ca.bundle.pem (the CA's private keys, 0600: bundle it \
            with debug builds only, and load it with DevelopmentAttestationCA(bundlePEM:)). Never trust \
            this root in production.
            """
    )

    @Option(help: "Folder to write the two files to (made if missing).")
    var out: String = "."

    @Flag(help: "Replace files that exist.")
    var force = false

    func run() throws {
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let ca = try DevelopmentAttestationCA()
        let root = (out as NSString).appendingPathComponent("attestation-root.pem")
        let bundle = (out as NSString).appendingPathComponent("attestation-ca.bundle.pem")
        try CLIInput.write(ca.bundlePEM, to: bundle, private: true, force: force)
        try CLIInput.write(try ca.rootPEM, to: root, private: false, force: force)
        print("wrote \(root) (the gateway's appAttest.trustedRootsFile)")
        print("wrote \(bundle) (debug builds only: DevelopmentAttestationCA(bundlePEM:))")
    }
}
