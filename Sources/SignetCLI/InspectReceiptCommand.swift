// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Crypto
import Foundation
import SignetAppAttest
import SignetCore
import SwiftASN1
import X509

/// `signet inspect receipt`: verifies an App Attest receipt at a time and prints its fields.
struct InspectReceipt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipt",
        abstract: "Verify an App Attest receipt (Apple's signer, chain, app, key) and print its fields.",
        discussion: """
            Prints one `name: value` line per field and exits 0, or prints `invalid: <reason code>` and \
            exits 1. The receipt is base64 (or binary), from FILE or stdin.
            """
    )

    @Option(help: "Verification time, RFC 3339.")
    var at: String

    @Option(name: .customLong("app-id"), help: "The App ID the receipt must name, TEAMID.bundle.id.")
    var appID: String?

    @Option(help: "PEM file of the attested public key the receipt must name.")
    var publicKey: String?

    @Option(help: "PEM file of roots to trust instead of Apple Root CA - G3 (the simulator's).")
    var trustedRoots: String?

    @Argument(help: "The receipt (base64 or binary); stdin when absent.")
    var file: String?

    func run() async throws {
        guard let time = ISO8601DateFormatter().date(from: at) else { throw ValidationError("--at is RFC 3339") }
        var expectation = AppAttestReceiptVerifier.Expectation()
        if let appID { expectation.appIDs = [appID] }
        if let publicKey {
            guard let key = try VerificationKey(text: try CLIInput.readText(publicKey)).p256PublicKey else {
                throw ValidationError("--public-key is a P-256 public key")
            }
            expectation.publicKey = Array(key.x963Representation)
        }
        let verifier = try AppAttestReceiptVerifier(
            roots: try trustedRoots.map { path in
                try PEMDocument.parseMultiple(pemString: try CLIInput.readText(path)).map {
                    try Certificate(derEncoded: $0.derBytes)
                }
            }
        )
        do {
            let receipt = try await verifier.verify(try readInspectedObject(file), at: time, expecting: expectation)
            print("type: \(receipt.kind.rawValue)")
            print("app-id: \(receipt.appID)")
            if let environment = receipt.environment { print("environment: \(environment)") }
            print("created: \(Self.rfc3339(receipt.createdAt))")
            print("risk-metric: \(receipt.riskMetric.map(String.init) ?? "none")")
            print("not-before: \(receipt.notBefore.map(Self.rfc3339) ?? "none")")
            print("expires: \(Self.rfc3339(receipt.expiresAt))")
            print("client-hash: \(Hex.encode(receipt.clientHash))")
        } catch let error as SignetError {
            print("invalid: \(error.code)")
            print("reason: \(error.reason)")
            throw ExitCode(1)
        }
    }

    static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
