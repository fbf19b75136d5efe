// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import SignetAndroid
import SignetCore
import SignetTestSupport
import Testing

/// Play Integrity tokens made by an independent JOSE implementation (joserfc, as Google Play makes
/// them: JWE A256KW/A256GCM around JWS ES256) with the Play Console's key formats: a genuine one
/// verifies; altered, expired, wrong-package, wrong-nonce, wrong-key and wrong-algorithm ones are
/// refused, each with its code; the verdict policy refuses what it should.
@Suite struct PlayIntegrityTests {
    static let made = Date(timeIntervalSince1970: 1_764_000_000)
    static let digest: [UInt8] = Array(SHA256.hash(data: Array("scores signing certificate".utf8)))

    /// The Play Console's two keys, as it shows them, and the signing key Google keeps.
    struct Keys {
        var decryption = SymmetricKey(size: .bits256)
        var signing = P256.Signing.PrivateKey()
        var decryptionBase64: String { decryption.withUnsafeBytes { Base64.encode(Array($0)) } }
        var verificationBase64: String { Base64.encode(Array(signing.publicKey.derRepresentation)) }
    }

    static func verdict(
        package: String = "com.example.scores",
        nonce: String = "challenge-1",
        made: Date = made,
        recognition: String = "PLAY_RECOGNIZED",
        device: [String] = ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"],
        licensing: String = "LICENSED"
    ) -> [String: Any] {
        [
            "requestDetails": [
                "requestPackageName": package, "nonce": nonce, "timestampMillis": String(Int64(made.timeIntervalSince1970 * 1000)),
            ],
            "appIntegrity": [
                "appRecognitionVerdict": recognition, "packageName": package,
                "certificateSha256Digest": [Base64.urlEncode(digest)], "versionCode": "42",
            ],
            "deviceIntegrity": ["deviceRecognitionVerdict": device],
            "accountDetails": ["appLicensingVerdict": licensing],
        ]
    }

    /// A token made by joserfc.
    static func token(_ keys: Keys, _ verdict: [String: Any], options: [String] = []) async throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("signet-pi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let keyFile = folder.appendingPathComponent("signing.pem")
        try Data(keys.signing.pemRepresentation.utf8).write(to: keyFile)
        let verdictFile = folder.appendingPathComponent("verdict.json")
        try JSONSerialization.data(withJSONObject: verdict).write(to: verdictFile)
        return try await PythonPeer.run(
            "play_integrity_peer.py",
            ["make", keys.decryptionBase64, keyFile.path, verdictFile.path] + options
        ).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func verifier(_ keys: Keys, _ policy: PlayIntegrityPolicy = policy) throws -> PlayIntegrityVerifier {
        try PlayIntegrityVerifier(decryptionKey: keys.decryptionBase64, verificationKey: keys.verificationBase64, policy: policy)
    }

    static let policy = PlayIntegrityPolicy(packageNames: ["com.example.scores"], certificateDigests: [digest])

    static func code(_ body: () throws -> Void) -> SignetError.Code? {
        do {
            try body()
            return nil
        } catch let error as SignetError {
            return error.code
        } catch {
            return .internalError
        }
    }

    @Test func aTokenMadeByAnotherJOSEImplementationVerifies() async throws {
        let keys = Keys()
        let token = try await Self.token(keys, Self.verdict())
        let verdict = try Self.verifier(keys).verify(token, nonce: "challenge-1", now: Self.made.addingTimeInterval(10))
        #expect(verdict.appIntegrity?.packageName == "com.example.scores")
        #expect(verdict.deviceIntegrityLevel == .device)
        #expect(verdict.accountDetails?.appLicensingVerdict == "LICENSED")
        #expect(verdict.timestamp == Self.made)
        // The verification key as PEM works too.
        let pem = try PlayIntegrityVerifier(
            decryptionKey: keys.decryptionBase64,
            verificationKey: keys.signing.publicKey.pemRepresentation,
            policy: Self.policy
        )
        #expect(try pem.verify(token, nonce: "challenge-1", now: Self.made).requestDetails?.nonce == "challenge-1")
    }

    @Test func eachBadTokenIsRefusedWithItsCode() async throws {
        let keys = Keys()
        let verifier = try Self.verifier(keys)
        let now = Self.made.addingTimeInterval(10)
        let good = try await Self.token(keys, Self.verdict())
        // Any byte of any part changed: the key does not unwrap, or the content does not decrypt.
        let parts = good.split(separator: ".").map(String.init)
        for index in 0..<5 {
            var altered = parts
            var characters = Array(altered[index])
            characters[characters.count / 2] = characters[characters.count / 2] == "A" ? "B" : "A"
            altered[index] = String(characters)
            #expect(Self.code { _ = try verifier.verify(altered.joined(separator: "."), nonce: "challenge-1", now: now) } == .tokenInvalid, "part \(index)")
        }
        #expect(Self.code { _ = try verifier.verify("a.b.c", nonce: nil, now: now) } == .tokenInvalid)
        #expect(Self.code { _ = try verifier.verify(String(repeating: "a.", count: 9000), nonce: nil, now: now) } == .tokenInvalid)
        // Another app's decryption key; a verdict signed by another key.
        #expect(Self.code { _ = try Self.verifier(Keys()).verify(good, nonce: "challenge-1", now: now) } == .tokenInvalid)
        // A forger who learnt the decryption key (it ships in no app, but say it leaked) still
        // cannot sign a verdict.
        var forger = Keys()
        forger.decryption = keys.decryption
        let forged = try await Self.token(forger, Self.verdict())
        #expect(Self.code { _ = try verifier.verify(forged, nonce: "challenge-1", now: now) } == .tokenInvalid)
        // Algorithms other than Google's: refused before anything is trusted.
        let a128 = try await Self.token(keys, Self.verdict(), options: ["--enc", "A128GCM"])
        #expect(Self.code { _ = try verifier.verify(a128, nonce: "challenge-1", now: now) } == .tokenInvalid)
        // Old, for another nonce, for another package, from an unrecognised app or a device below the bar.
        #expect(Self.code { _ = try verifier.verify(good, nonce: "challenge-1", now: Self.made.addingTimeInterval(301)) } == .tokenExpired)
        #expect(Self.code { _ = try verifier.verify(good, nonce: "challenge-2", now: now) } == .attestationNonceMismatch)
        let otherApp = try await Self.token(keys, Self.verdict(package: "com.evil.scores"))
        #expect(Self.code { _ = try verifier.verify(otherApp, nonce: "challenge-1", now: now) } == .appIDMismatch)
        let sideloaded = try await Self.token(keys, Self.verdict(recognition: "UNRECOGNIZED_VERSION"))
        #expect(Self.code { _ = try verifier.verify(sideloaded, nonce: "challenge-1", now: now) } == .integrityVerdictInsufficient)
        let basic = try await Self.token(keys, Self.verdict(device: ["MEETS_BASIC_INTEGRITY"]))
        #expect(Self.code { _ = try verifier.verify(basic, nonce: "challenge-1", now: now) } == .integrityVerdictInsufficient)
        var lenient = Self.policy
        lenient.minimumDeviceIntegrity = .basic
        #expect(Self.code { _ = try Self.verifier(keys, lenient).verify(basic, nonce: "challenge-1", now: now) } == nil)
        let none = try await Self.token(keys, Self.verdict(device: []))
        #expect(Self.code { _ = try Self.verifier(keys, lenient).verify(none, nonce: "challenge-1", now: now) } == .integrityVerdictInsufficient)
        var strict = Self.policy
        strict.minimumDeviceIntegrity = .strong
        #expect(Self.code { _ = try Self.verifier(keys, strict).verify(good, nonce: "challenge-1", now: now) } == .integrityVerdictInsufficient)
        strict = Self.policy
        strict.requireLicensed = true
        let unlicensed = try await Self.token(keys, Self.verdict(licensing: "UNLICENSED"))
        #expect(Self.code { _ = try Self.verifier(keys, strict).verify(unlicensed, nonce: "challenge-1", now: now) } == .integrityVerdictInsufficient)
    }

    @Test func theConsoleKeysAreReadAsTheConsoleShowsThem() {
        #expect(Self.code { _ = try PlayIntegrityVerifier(decryptionKey: "c2hvcnQ=", verificationKey: Keys().verificationBase64, policy: Self.policy) } == .invalidKey)
        #expect(Self.code { _ = try PlayIntegrityVerifier(decryptionKey: Keys().decryptionBase64, verificationKey: "bm90IGEga2V5", policy: Self.policy) } == .invalidKey)
    }

    /// Tokens a JOSE library would not make, built here byte by byte: each refused before anything
    /// in them is trusted, or by the verdict check that applies.
    @Test func handMadeTokensAreRefused() throws {
        let keys = Keys()
        let verifier = try Self.verifier(keys)
        let now = Self.made.addingTimeInterval(10)
        func jws(header: String = #"{"alg":"ES256"}"#, _ verdict: [String: Any], signedWith key: P256.Signing.PrivateKey? = nil) throws -> String {
            let input = Base64.urlEncode(Array(header.utf8)) + "." + Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: verdict)))
            let signature = try (key ?? keys.signing).signature(for: Array(input.utf8)).rawRepresentation
            return input + "." + Base64.urlEncode(Array(signature))
        }
        func jwe(_ content: String, header: String = #"{"alg":"A256KW","enc":"A256GCM"}"#, contentKey: SymmetricKey = SymmetricKey(size: .bits256)) throws -> String {
            let protected = Base64.urlEncode(Array(header.utf8))
            let wrapped = try AES.KeyWrap.wrap(contentKey, using: keys.decryption)
            let sealed = try AES.GCM.seal(Array(content.utf8), using: contentKey, nonce: AES.GCM.Nonce(), authenticating: Array(protected.utf8))
            return [protected, Base64.urlEncode(Array(wrapped)), Base64.urlEncode(Array(sealed.nonce)), Base64.urlEncode(Array(sealed.ciphertext)), Base64.urlEncode(Array(sealed.tag))]
                .joined(separator: ".")
        }
        func code(_ token: String) -> SignetError.Code? { Self.code { _ = try verifier.verify(token, nonce: "challenge-1", now: now) } }

        // The hand-made path itself is sound: a well-formed one verifies.
        #expect(code(try jwe(try jws(Self.verdict()))) == nil)
        // JWE headers: compression, critical extensions, another key wrap; a 128-bit content key.
        #expect(code(try jwe(try jws(Self.verdict()), header: #"{"alg":"A256KW","enc":"A256GCM","zip":"DEF"}"#)) == .tokenInvalid)
        #expect(code(try jwe(try jws(Self.verdict()), header: #"{"alg":"A256KW","enc":"A256GCM","crit":["x"],"x":1}"#)) == .tokenInvalid)
        #expect(code(try jwe(try jws(Self.verdict()), header: #"{"alg":"dir","enc":"A256GCM"}"#)) == .tokenInvalid)
        #expect(code(try jwe(try jws(Self.verdict()), contentKey: SymmetricKey(size: .bits128))) == .tokenInvalid)
        // JWS: unsigned, HMAC'd with a guessable key, ES384, signed by another key, critical headers.
        let payload = Base64.urlEncode(Array(try JSONSerialization.data(withJSONObject: Self.verdict())))
        #expect(code(try jwe(Base64.urlEncode(Array(#"{"alg":"none"}"#.utf8)) + "." + payload + ".")) == .tokenInvalid)
        let hs = Base64.urlEncode(Array(#"{"alg":"HS256"}"#.utf8)) + "." + payload
        let mac = HMAC<SHA256>.authenticationCode(for: Array(hs.utf8), using: keys.decryption)
        #expect(code(try jwe(hs + "." + Base64.urlEncode(Array(mac)))) == .tokenInvalid)
        #expect(code(try jwe(try jws(header: #"{"alg":"ES384"}"#, Self.verdict()))) == .tokenInvalid)
        #expect(code(try jwe(try jws(Self.verdict(), signedWith: P256.Signing.PrivateKey()))) == .tokenInvalid)
        #expect(code(try jwe(try jws(header: #"{"alg":"ES256","crit":["b64"],"b64":false}"#, Self.verdict()))) == .tokenInvalid)
        // Verdicts: no time; only virtual integrity; no signing digest; the package named only by the caller.
        var untimed = Self.verdict()
        untimed["requestDetails"] = ["requestPackageName": "com.example.scores", "nonce": "challenge-1"]
        #expect(code(try jwe(try jws(untimed))) == .tokenInvalid)
        #expect(code(try jwe(try jws(Self.verdict(device: ["MEETS_VIRTUAL_INTEGRITY"])))) == .integrityVerdictInsufficient)
        var undigested = Self.verdict()
        undigested["appIntegrity"] = ["appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.scores", "certificateSha256Digest": [String]()]
        #expect(code(try jwe(try jws(undigested))) == .appIDMismatch)
        var claimed = Self.verdict()
        claimed["appIntegrity"] = ["appRecognitionVerdict": "PLAY_RECOGNIZED", "certificateSha256Digest": [Base64.urlEncode(Self.digest)]]
        #expect(code(try jwe(try jws(claimed))) == .appIDMismatch)
        // A standard verdict's requestHash stands where a classic one's nonce does.
        var standard = Self.verdict()
        standard["requestDetails"] = ["requestPackageName": "com.example.scores", "requestHash": "challenge-1", "timestampMillis": "1764000000000"]
        #expect(code(try jwe(try jws(standard))) == nil)
    }
}

