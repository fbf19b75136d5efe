// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Foundation
import SignetClient
import SignetCore
import SwiftASN1
import X509

/// `signet request`: a curl for Signet — one signed request over pinned TLS, the response checked.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send a signed, pinned HTTP request and print the response (a curl for Signet).",
        discussion: """
            Only the URL's origin (and those given with --allow) is contacted: a redirect elsewhere is refused \
            before anything is sent there. With --pin, the server's validated chain must hold one of the pins \
            (pin_mismatch otherwise, with the pins of the served chain). Exit status: 0 for a response, 22 for \
            an HTTP error with --fail, 1 when the request was refused before or without an answer.
            """
    )

    @Argument(help: "The absolute URL.")
    var url: String

    @Option(name: [.customShort("X"), .customLong("method")], help: "Method (default GET, or POST with a body).")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header field \"Name: value\" (repeatable).")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "Body text.")
    var data: String?

    @Option(help: "Body file (- for stdin).")
    var dataFile: String?

    @Option(help: "Signing key: PEM, JWK, or a file holding a base64 HMAC secret. Unsigned without it.")
    var key: String?

    @Option(name: [.customLong("keyid"), .customLong("kid")], help: "The keyid to sign with.")
    var keyid: String?

    @Option(help: "Algorithm (default: from the key type).")
    var alg: String?

    @OptionGroup var connection: ConnectionOptions

    @Option(help: "Public key of the server's response signatures; a response must then be signed by it.")
    var responseKey: String?

    @Option(help: "The keyid of --response-key.")
    var responseKeyid: String = "gateway"

    @Option(help: "Another origin requests and redirects may go to (repeatable).")
    var allow: [String] = []

    @Option(help: "A trust public key (PEM) for signed trust documents; repeatable (key ids from --trust-kid, else trust-1, trust-2, …).")
    var trustKey: [String] = []

    @Option(help: "The key ids of --trust-key, in order.")
    var trustKid: [String] = []

    @Option(help: "Where the accepted trust document is kept between runs.")
    var trustState: String?

    @Option(help: "The trust document (JWS) to start from, as an app compiles one in.")
    var trustDocument: String?

    @Option(help: "Send the request encrypted (Oblivious HTTP) to the key configurations in this file (application/ohttp-keys).")
    var ohttpKeys: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the status line and header fields.")
    var include = false

    @Flag(help: "Exit 22 on an HTTP status of 400 or above.")
    var fail = false

    func run() async throws {
        let origin = try Origin(url)
        var fields = MessageFields()
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else { throw ValidationError("a header is \"Name: value\"") }
            fields.append(
                name: String(header[..<colon]),
                value: header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            )
        }
        let body: [UInt8] = try dataFile.map(CLIInput.read) ?? Array((data ?? "").utf8)

        var responseKeys: KeyRing?
        if let responseKey {
            let verificationKey = try VerificationKey(text: try CLIInput.readText(responseKey))
            responseKeys = KeyRing([
                KeyRecord(keyID: responseKeyid, algorithm: verificationKey.type.defaultAlgorithm, key: verificationKey)
            ])
        }
        var clientConfiguration = SignetClientConfiguration(
            origins: [origin] + (try allow.map(Origin.init)),
            trust: try connection.trust(for: origin),
            clientIdentity: try connection.identity(),
            responseKeys: responseKeys,
            requireSignedResponses: responseKeys != nil,
            pinReportPath: nil
        )
        if let ohttpKeys {
            do {
                clientConfiguration.obliviousKeys = try OHTTPKeyConfiguration.decodeList(try CLIInput.read(ohttpKeys))
            } catch let error as SignetError {
                throw ValidationError("--ohttp-keys: \(error.reason)")
            }
            guard !clientConfiguration.obliviousKeys.isEmpty else {
                throw ValidationError("--ohttp-keys: the file lists no key configuration Signet supports")
            }
        }
        if !trustKey.isEmpty {
            var keys: [String: String] = [:]
            for (index, path) in trustKey.enumerated() {
                keys[index < trustKid.count ? trustKid[index] : "trust-\(index + 1)"] = try CLIInput.readText(path)
            }
            clientConfiguration.trustUpdates = TrustUpdates(
                trustKeys: keys,
                compiledDocument: try trustDocument.map(CLIInput.readText),
                stateDirectory: trustState
            )
        } else if trustState != nil || trustDocument != nil {
            throw ValidationError("--trust-state and --trust-document need --trust-key")
        }
        let client = try SignetClient(configuration: clientConfiguration)
        if clientConfiguration.trustUpdates != nil {
            // The same logic as an app's: start from what is held, then take the server's document
            // over a connection the pins in force accept; a refusal keeps what is held.
            do {
                try await client.loadTrust()
            } catch let error as SignetError {
                throw ValidationError("--trust-document: \(error.code): \(error.reason)")
            }
            switch await client.updateTrust(origin: origin) {
            case .updated(let version):
                FileHandle.standardError.write(Data("signet: trust document version \(version) taken\n".utf8))
            case .unchanged(let version):
                FileHandle.standardError.write(Data("signet: trust document version \(version) unchanged\n".utf8))
            case .refused(let error):
                FileHandle.standardError.write(Data("signet: trust document refused: \(error.code): \(error.reason)\n".utf8))
            }
        }
        if let key {
            guard let keyid else { throw ValidationError("--key needs --keyid (use --keyid=ID when it starts with -)") }
            let signingKey = try KeyFiles.signingKey(path: key)
            let algorithm = try SignatureAlgorithms.standard.require(alg ?? signingKey.type.defaultAlgorithm)
            await client.useSigner(MessageSigner(key: signingKey, keyID: keyid, algorithm: algorithm))
        }

        let response: ClientResponse
        do {
            let method = method ?? (body.isEmpty ? "GET" : "POST")
            response =
                ohttpKeys == nil
                ? try await client.send(method, url, fields: fields, body: body)
                : try await client.sendOblivious(method, url, fields: fields, body: body)
        } catch let error as SignetError {
            FileHandle.standardError.write(Data("signet: \(error.code): \(error.reason)\n".utf8))
            throw ExitCode(1)
        }
        for report in await client.pendingPinReports {
            FileHandle.standardError.write(Data("signet: pin failure report (report-only): ".utf8 + report + [0x0A]))
        }
        if include {
            var head = "HTTP/1.1 \(response.status)\n"
            for line in response.fields.lines { head += "\(line.name): \(line.value)\n" }
            if let signature = response.signature { head += "# response signature by \(signature.keyID) verified\n" }
            StandardOutput.write(Data((head + "\n").utf8))
        }
        StandardOutput.write(Data(response.body))
        if fail && response.status >= 400 { throw ExitCode(22) }
    }
}
