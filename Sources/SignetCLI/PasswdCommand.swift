// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import Logging
import SignetCore
import SignetMiddleware
import SignetServer
import SignetStore

/// `signet passwd --config FILE USER`: sets a user's password in the gateway's store, offline,
/// as `PUT /signet/v1/users/{name}` does online.
struct PasswdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passwd",
        abstract: "Set (or --delete) a password login user in the gateway's store.",
        discussion: """
            The password is the first line of standard input (nothing is echoed; no argument holds it). \
            What is stored follows the configuration's `passwords`: a PBKDF2 hash when Basic is on and \
            the Digest HA1 of each algorithm, in its realm. Deleting a user revokes its devices.
            """
    )

    @Option(help: "The gateway's configuration file (JSON): its store and its passwords settings.")
    var config: String

    @Flag(help: "Delete the user (and revoke its devices) instead.")
    var delete = false

    @Argument(help: "The user name.")
    var user: String

    func run() async throws {
        var logger = Logger(label: "signet.passwd")
        logger.logLevel = .error
        let configuration: GatewayConfiguration
        do {
            configuration = try GatewayConfiguration.load(file: config, environment: ProcessInfo.processInfo.environment)
            try AccountName.validate(user)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        } catch let error as SignetError {
            throw ValidationError(error.reason)
        }
        guard let login = configuration.passwordLogin else {
            throw ValidationError("\(config) configures no passwords")
        }
        let account: AccountRecord?
        if delete {
            account = nil
        } else {
            let line = String(decoding: try CLIInput.read(nil), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).first
            let password = String(line ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
            do {
                account = try AccountRecord.make(
                    name: user,
                    password: password,
                    realm: login.realm,
                    algorithms: login.digestAlgorithms,
                    basicIterations: login.basic ? login.basicIterations : nil,
                    now: Date()
                )
            } catch let error as SignetError {
                throw ValidationError(error.reason)
            }
        }
        let store = try await configuration.store.open(logger: logger)
        do {
            if let account {
                let created = try await store.putAccount(account)
                print(created ? "created user \(user)" : "changed the password of \(user)")
            } else {
                guard try await store.deleteAccount(name: user, at: Date()) else {
                    throw ValidationError("no user \(user)")
                }
                print("deleted user \(user) and revoked its devices")
            }
        } catch {
            try? await store.shutdown()
            throw error
        }
        try await store.shutdown()
    }
}
