// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetClient
import SignetCore

/// `signet register`: a device key registered with a gateway the way an app does it — a challenge,
/// the challenge signed with the key as proof of possession, the registration posted — so nobody
/// has to sign a challenge with openssl and base64url it by hand.
struct RegisterCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "register",
        abstract: "Register a P-256 device key with a Signet gateway and print its device id and keyid.",
        discussion: """
            Asks URL's origin for a challenge (POST /signet/v1/challenges), signs it with --key and posts the \
            registration (POST /signet/v1/devices). The keyid printed is the one to sign with: \
            `signet request URL --key KEY --keyid KEYID`. With --certificate-out, a CSR goes along and the \
            client certificate the device CA issues is written there (for --cert). --user registers the \
            device to a user, with the password from the environment variable --password-env names. \
            Exit status: 0 registered, 1 refused (the reason code on stderr).
            """
    )

    @Argument(help: "The gateway's URL; only its origin is used.")
    var url: String

    @Option(help: "The device's P-256 private key (PEM or JWK; `signet keygen --alg ecdsa-p256-sha256` makes one).")
    var key: String

    @Option(help: "Ask for a client certificate and write it (PEM, leaf first) to this file.")
    var certificateOut: String?

    @Option(help: "Register the device to this user (a password login, as the gateway's passwords ask).")
    var user: String?

    @Option(help: "The environment variable holding --user's password.")
    var passwordEnv: String = "SIGNET_PASSWORD"

    @Flag(help: "Replace an existing --certificate-out file.")
    var force = false

    @OptionGroup var connection: ConnectionOptions

    func run() async throws {
        let origin = try Origin(url)
        let signingKey = try KeyFiles.signingKey(path: key)
        guard let privateKey = signingKey.p256PrivateKey else {
            throw ValidationError("--key is a P-256 private key, not \(signingKey.type.rawValue)")
        }
        if let certificateOut, FileManager.default.fileExists(atPath: certificateOut), !force {
            throw ValidationError("\(certificateOut) exists; pass --force to replace it")
        }
        let client = try SignetClient(
            configuration: SignetClientConfiguration(
                origins: [origin],
                trust: try connection.trust(for: origin),
                clientIdentity: try connection.identity(),
                pinReportPath: nil
            )
        )
        if let user {
            // A report-only pin check goes ahead on a mismatch: never with a password.
            guard !connection.reportOnly else { throw ValidationError("--user cannot go with --report-only") }
            guard let password = ProcessInfo.processInfo.environment[passwordEnv] else {
                throw ValidationError("--user needs the password in \(passwordEnv)")
            }
            await client.usePassword(PasswordCredentials(user: user, password: password))
        }
        let provider = SoftwareKeyProvider(privateKey: privateKey, requestCertificate: certificateOut != nil)
        let device: RegisteredDevice
        do {
            device = try await client.register(using: provider)
        } catch let error as SignetError {
            FileHandle.standardError.write(Data("signet: \(error.code): \(error.reason)\n".utf8))
            throw ExitCode(1)
        }
        if let certificateOut {
            guard let chain = device.certificateChainPEM else {
                FileHandle.standardError.write(Data("signet: the gateway issued no client certificate\n".utf8))
                throw ExitCode(1)
            }
            try CLIInput.write(chain, to: certificateOut, private: false, force: force)
        }
        print("deviceId: \(device.deviceID)")
        print("keyid: \(device.keyID)")
        if let user = device.user { print("user: \(user)") }
        if let certificateOut { print("wrote: \(certificateOut)") }
    }
}
