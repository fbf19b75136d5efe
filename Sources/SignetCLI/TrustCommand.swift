// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetCore
import SignetTrust

/// `signet trust sign|verify|init`: signed trust documents (pin sets and keys apps update without
/// a release).
struct TrustCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Sign, verify or draft a trust document (a compact JWS of pin sets and keys).",
        discussion: """
            A trust document is JSON: iss, iat, exp (seconds since 1970), version (only a higher one \
            replaces a document an app holds), pinSets ([{host, pins, mode?, positions?, softExpiry?, \
            hardExpiry?, hardExpiryBehaviour?}]), and optionally ohttpKeys (base64url application/ohttp-keys) \
            and responseKeys ({kid: PEM}). It is signed ES256 (P-256 key) or EdDSA (Ed25519 key) by an offline \
            trust key whose public half apps compile in.
            """,
        subcommands: [Sign.self, Verify.self, Init.self]
    )

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    struct Sign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the JWS of the JSON document in FILE (or standard input).")

        @Option(help: "The trust key (PEM, P-256 or Ed25519).")
        var key: String

        @Option(name: [.customLong("kid"), .customLong("keyid")], help: "The key id apps know the trust key by.")
        var kid: String

        @Argument(help: "The JSON document (default: standard input).")
        var file: String?

        func run() async throws {
            let signingKey = try KeyFiles.signingKey(path: key)
            let document: TrustDocument
            do {
                document = try TrustCommand.decoder().decode(TrustDocument.self, from: Data(try CLIInput.read(file ?? "-")))
            } catch {
                throw ValidationError("the document is not a trust document: \(error)")
            }
            // A document that would be refused is not signed.
            _ = try document.pinSetValues()
            _ = try document.ohttpKeyConfigurations()
            let signer: TrustSigner
            do {
                signer = try await TrustSigner(key: signingKey, kid: kid)
            } catch let error as SignetError {
                throw ValidationError("--key: \(error.reason)")
            }
            print(try await signer.sign(document))
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the verified document in FILE (or standard input), or invalid: <reason> (exit 1)."
        )

        @Option(help: "A trust public key (PEM); repeat for several (their key ids are kid-1, kid-2, … unless --kid).")
        var key: [String]

        @Option(name: [.customLong("kid"), .customLong("keyid")], help: "The key ids of --key, in order.")
        var kid: [String] = []

        @Argument(help: "The JWS (default: standard input).")
        var file: String?

        func run() async throws {
            var keys: [String: String] = [:]
            for (index, path) in key.enumerated() {
                keys[index < kid.count ? kid[index] : "kid-\(index + 1)"] = try CLIInput.readText(path)
            }
            let trusted: TrustKeys
            do {
                trusted = try await TrustKeys(publicKeys: keys)
            } catch let error as SignetError {
                throw ValidationError("--key: \(error.reason)")
            }
            do {
                let document = try await trusted.verify(try CLIInput.readText(file ?? "-"), now: Date())
                _ = try document.pinSetValues()
                print(String(decoding: try TrustCommand.encoder().encode(document), as: UTF8.self))
            } catch let error as SignetError {
                print("invalid: \(error.code)")
                FileHandle.standardError.write(Data("signet: \(error.reason)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Draft a document pinning the chain HOST:PORT serves, with a backup pin."
        )

        @Option(help: "HOST:PORT to take the served chain from.")
        var host: String

        @Option(help: "The backup key (PEM) kept offline; without it a new P-256 key is written to --backup-out.")
        var backupKey: String?

        @Option(help: "Where a new backup key is written.")
        var backupOut: String = "backup.key.pem"

        @Option(help: "The issuer (iss).")
        var issuer: String = "signet"

        @Option(help: "Days until the document expires.")
        var days: Int = 90

        func run() async throws {
            guard let colon = host.lastIndex(of: ":"), let port = Int(host[host.index(after: colon)...]) else {
                throw ValidationError("--host is HOST:PORT")
            }
            let name = String(host[..<colon])
            let chain = try await ServedChain.fetch(host: name, port: port)
            var pins = try chain.map { try SPKIPin(certificateDER: $0).description }
            let backup: VerificationKey
            if let backupKey {
                backup = try VerificationKey(pem: try CLIInput.readText(backupKey))
            } else {
                let key = try SigningKey.generate(.p256)
                try CLIInput.write(key.pemRepresentation ?? "", to: backupOut, private: true, force: false)
                FileHandle.standardError.write(Data("signet: wrote a new backup key to \(backupOut); keep it offline\n".utf8))
                backup = key.verificationKey
            }
            guard let spki = backup.spkiDER else { throw ValidationError("the backup key has no SPKI form") }
            pins.append(SPKIPin(spkiDER: spki).description)
            let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let document = TrustDocument(
                issuer: issuer,
                issuedAt: now,
                expires: now.addingTimeInterval(TimeInterval(days) * 86_400),
                version: 1,
                pinSets: [PinSetClaim(host: name, pins: pins)]
            )
            print(String(decoding: try TrustCommand.encoder().encode(document), as: UTF8.self))
        }
    }
}
