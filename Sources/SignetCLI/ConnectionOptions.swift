// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import SignetClient
import SignetCore

/// How `signet request` and `signet register` reach a server: the CAs trusted, the pins, a client
/// certificate. One definition, so the two commands agree on every option's spelling and meaning.
struct ConnectionOptions: ParsableArguments {
    @Option(help: "A pin sha256/<base64>, pin-sha256=\"…\" or bare base64 (repeatable).")
    var pin: [String] = []

    @Flag(help: "Allow a pin set without a backup pin.")
    var waiveBackup = false

    @Flag(help: "Report a pin mismatch on stderr but go ahead.")
    var reportOnly = false

    @Option(help: "Trust only the CA certificates in this PEM file (default: the system's roots).")
    var cacert: String?

    @Option(help: "Client certificate chain (PEM) for mutual TLS.")
    var cert: String?

    @Option(help: "The client certificate's private key (PEM).")
    var certKey: String?

    /// The roots and pins for `origin`. Mistakes in the arguments are usage errors (exit 64), not a
    /// refused request (exit 1).
    func trust(for origin: Origin) throws -> ServerTrustEvaluator {
        var pinSets: [PinSet] = []
        if !pin.isEmpty {
            let pins: [SPKIPin]
            do {
                pins = try pin.map(SPKIPin.init(parsing:))
            } catch let error as SignetError {
                throw ValidationError("--pin: \(error.reason)")
            }
            guard Set(pins).count > 1 || waiveBackup else {
                throw ValidationError("--pin: a pin set needs a backup pin; give a second --pin or --waive-backup")
            }
            pinSets.append(
                try PinSet(
                    pattern: try HostPattern(origin.host),
                    pins: Set(pins),
                    mode: reportOnly ? .reportOnly : .enforce,
                    backupWaived: waiveBackup
                )
            )
        }
        let roots: ServerTrustEvaluator.Roots = try cacert.map {
            .only(try ServerTrustEvaluator.certificates(pem: try CLIInput.readText($0)))
        } ?? .system
        return ServerTrustEvaluator(roots: roots, pinSets: pinSets)
    }

    /// The client certificate and key, when given.
    func identity() throws -> ClientIdentity? {
        guard let cert else {
            if certKey != nil { throw ValidationError("--cert-key needs --cert") }
            return nil
        }
        guard let certKey else { throw ValidationError("--cert needs --cert-key") }
        return ClientIdentity(
            certificateChainPEM: try CLIInput.readText(cert),
            privateKeyPEM: try CLIInput.readText(certKey)
        )
    }
}
