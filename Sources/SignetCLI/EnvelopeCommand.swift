// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore

/// `signet envelope seal|open`: the legacy encrypted bodies a `legacy-envelope` route reads.
struct EnvelopeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "envelope",
        abstract: "Seal or open a legacy envelope: JSON {mac, iv, payload} or RNCryptor v3.",
        discussion: """
            Keys: --key-b64 (64 bytes: the AES-256 key, then the HMAC-SHA256 key) or --password-utf8. With a \
            password, RNCryptor takes its salts from the message (sealing makes new ones); the JSON envelope \
            takes them from --salt-b64 and --mac-salt-b64 (PBKDF2, --iterations, --hash). RNCryptor messages are \
            written in base64 (as apps usually carry them); open reads binary or base64. Exit status 1 when an \
            envelope does not open.
            """,
        subcommands: [Seal.self, Open.self]
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case json, rncryptor
    }

    struct Keys: ParsableArguments {
        @Option(help: "json or rncryptor.")
        var format: Format = .json

        @Option(help: "64 bytes in base64: the encryption key, then the MAC key.")
        var keyB64: String?

        @Option(help: "A password (UTF-8) to derive the keys from with PBKDF2.")
        var passwordUtf8: String?

        @Option(help: "JSON with a password: the encryption key's salt (base64).")
        var saltB64: String?

        @Option(help: "JSON with a password: the MAC key's salt (base64).")
        var macSaltB64: String?

        @Option(help: "JSON with a password: PBKDF2 rounds.")
        var iterations: Int = RNCryptorV3.rounds

        @Option(help: "JSON with a password: PBKDF2's hash, sha1, sha256 or sha512.")
        var hash: String = "sha1"

        @Option(help: "The key version the JSON envelope names.")
        var version: String = "1"

        /// The key, or `nil` for an RNCryptor password (derived per message).
        func key() throws -> EnvelopeKey? {
            switch (keyB64, passwordUtf8) {
            case (let text?, nil):
                guard let bytes = Base64.decode(text), bytes.count == 64 else {
                    throw ValidationError("--key-b64: 64 bytes of base64 (encryption key, then MAC key)")
                }
                return try EnvelopeKey(version: version, encryptionKey: Array(bytes[..<32]), macKey: Array(bytes[32...]))
            case (nil, let password?):
                if format == .rncryptor { return nil }
                guard let salt = saltB64.flatMap(Base64.decode), let macSalt = macSaltB64.flatMap(Base64.decode),
                    !salt.isEmpty, !macSalt.isEmpty
                else { throw ValidationError("a JSON envelope with --password-utf8 needs --salt-b64 and --mac-salt-b64") }
                guard let function = EnvelopeKey.PBKDF2Hash(rawValue: hash) else {
                    throw ValidationError("--hash: sha1, sha256 or sha512")
                }
                guard iterations >= 1 else { throw ValidationError("--iterations: at least 1") }
                return try EnvelopeKey.derive(
                    version: version,
                    password: Array(password.utf8),
                    encryptionSalt: salt,
                    macSalt: macSalt,
                    rounds: iterations,
                    hash: function
                )
            default:
                throw ValidationError("give exactly one of --key-b64 and --password-utf8")
            }
        }
    }

    struct Seal: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Encrypt and MAC the plaintext in FILE (or standard input).")

        @OptionGroup var keys: Keys

        @Argument(help: "The plaintext (default: standard input).")
        var file: String?

        func run() throws {
            let plaintext = try CLIInput.read(file ?? "-")
            let sealed: [UInt8]
            switch keys.format {
            case .json:
                sealed = try JSONEnvelope.seal(plaintext, key: try keys.key()!) + [0x0A]
            case .rncryptor:
                let message: [UInt8]
                if let key = try keys.key() {
                    message = try RNCryptorV3.seal(plaintext, key: key)
                } else {
                    let salts = (EnvelopeKey.randomSalt(), EnvelopeKey.randomSalt())
                    let key = try RNCryptorV3.key(password: Array(keys.passwordUtf8!.utf8), salts: salts)
                    message = try RNCryptorV3.seal(plaintext, key: key, passwordSalts: salts)
                }
                sealed = Array((Base64.encode(message) + "\n").utf8)
            }
            StandardOutput.write(Data(sealed))
        }
    }

    struct Open: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check the MAC of the envelope in FILE, then decrypt it.")

        @OptionGroup var keys: Keys

        @Argument(help: "The envelope (default: standard input).")
        var file: String?

        func run() throws {
            var data = try CLIInput.read(file ?? "-")
            let key = try keys.key()
            do {
                let plaintext: [UInt8]
                switch keys.format {
                case .json:
                    plaintext = try JSONEnvelope.open(data, keys: [key!]).plaintext
                case .rncryptor:
                    if data.first != 3, let decoded = Base64.decode(String(decoding: data, as: UTF8.self).filter { !$0.isWhitespace }) {
                        data = decoded
                    }
                    if let key {
                        plaintext = try RNCryptorV3.open(data, keys: [key]).plaintext
                    } else {
                        guard let salts = RNCryptorV3.salts(of: data) else {
                            throw SignetError(.envelopeInvalid, "the envelope does not open")
                        }
                        let derived = try RNCryptorV3.key(password: Array(keys.passwordUtf8!.utf8), salts: salts)
                        plaintext = try RNCryptorV3.open(data, keys: [derived]).plaintext
                    }
                }
                StandardOutput.write(Data(plaintext))
            } catch let error as SignetError {
                FileHandle.standardError.write(Data("signet: \(error.code): \(error.reason)\n".utf8))
                throw ExitCode(1)
            }
        }
    }
}
