// SPDX-License-Identifier: Apache-2.0
import SignetCore
import SwiftASN1

/// The Android Keystore's attestation record: the `KeyDescription` extension
/// (OID 1.3.6.1.4.1.11129.2.1.17) of an attestation certificate, for every version Google defines
/// (Keymaster 1–4: attestation versions 1–4; KeyMint 1–4: 100, 200, 300, 400). Read with
/// swift-asn1; fields a version does not have, or this reader does not use, are skipped.
public struct KeyDescription: Sendable, Equatable {
    /// The certificate extension that carries the record.
    public static let extensionOID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    /// Where a key lives, and who vouches for the record.
    public enum SecurityLevel: Int, Sendable, Comparable, CustomStringConvertible {
        case software = 0
        case trustedEnvironment = 1
        case strongBox = 2

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
        public var description: String {
            switch self {
            case .software: "software"
            case .trustedEnvironment: "tee"
            case .strongBox: "strongbox"
            }
        }
    }

    public var attestationVersion: Int
    public var attestationSecurityLevel: SecurityLevel
    /// The Keymaster or KeyMint version.
    public var keymasterVersion: Int
    public var keymasterSecurityLevel: SecurityLevel
    /// The app's `setAttestationChallenge`: the server's challenge, as bytes.
    public var attestationChallenge: [UInt8]
    public var uniqueID: [UInt8]
    /// What the Android OS vouches for (software), and what the secure hardware does.
    public var softwareEnforced: AuthorizationList
    public var hardwareEnforced: AuthorizationList

    /// The property as the level that vouches for the key says it: hardware first.
    public func enforced<Value>(_ property: KeyPath<AuthorizationList, Value?>) -> Value? {
        hardwareEnforced[keyPath: property] ?? softwareEnforced[keyPath: property]
    }

    /// Reads the extension's value (the OCTET STRING's content).
    public init(derEncoded bytes: [UInt8]) throws {
        do {
            let root = try DER.parse(bytes)
            guard case .constructed(let children) = root.content, root.identifier == .sequence else {
                throw Self.malformed("not a SEQUENCE")
            }
            var fields = children.makeIterator()
            func next() throws -> ASN1Node {
                guard let node = fields.next() else { throw Self.malformed("too few fields") }
                return node
            }
            attestationVersion = try Int(derEncoded: try next())
            attestationSecurityLevel = try Self.level(try next())
            keymasterVersion = try Int(derEncoded: try next())
            keymasterSecurityLevel = try Self.level(try next())
            attestationChallenge = try Array(ASN1OctetString(derEncoded: try next()).bytes)
            uniqueID = try Array(ASN1OctetString(derEncoded: try next()).bytes)
            softwareEnforced = try AuthorizationList(try next())
            hardwareEnforced = try AuthorizationList(try next())
        } catch let error as SignetError {
            throw error
        } catch {
            throw Self.malformed("\(error)")
        }
    }

    static func level(_ node: ASN1Node) throws -> SecurityLevel {
        let raw = try Int(derEncoded: node, withIdentifier: .enumerated)
        guard let level = SecurityLevel(rawValue: raw) else { throw malformed("security level \(raw)") }
        return level
    }

    static func malformed(_ detail: String) -> SignetError {
        SignetError(.attestationChainInvalid, "the key attestation record does not parse: \(detail)")
    }
}

/// Authorizations of an attested key (`AuthorizationList`): every field is optional and tagged
/// with its Keymaster tag number. The ones a server decides on are read; the others skipped.
public struct AuthorizationList: Sendable, Equatable {
    public var purposes: Set<Int>?
    /// 3 RSA, 4 EC (Keymaster's `Algorithm`).
    public var algorithm: Int?
    public var keySize: Int?
    /// 1 P-256 (Keymaster's `EcCurve`).
    public var ecCurve: Int?
    /// Milliseconds since 1970.
    public var creationDateTime: Int?
    /// 0 generated in the secure hardware (Keymaster's `KeyOrigin`).
    public var origin: Int?
    public var rootOfTrust: RootOfTrust?
    /// `ABBCCDD`: Android A.BB.CC.DD.
    public var osVersion: Int?
    /// `YYYYMM`.
    public var osPatchLevel: Int?
    public var attestationApplicationID: AttestationApplicationID?
    /// `YYYYMMDD` (or `YYYYMM` on some devices).
    public var vendorPatchLevel: Int?
    public var bootPatchLevel: Int?

    init(_ node: ASN1Node) throws {
        guard case .constructed(let children) = node.content else {
            throw KeyDescription.malformed("an authorization list is not a SEQUENCE")
        }
        for child in children {
            // Each field is [tag] EXPLICIT: one node inside.
            guard child.identifier.tagClass == .contextSpecific, case .constructed(let wrapped) = child.content,
                let inner = wrapped.first(where: { _ in true })
            else { continue }
            switch child.identifier.tagNumber {
            case 1: purposes = try Self.integers(inner)
            case 2: algorithm = try Int(derEncoded: inner)
            case 3: keySize = try Int(derEncoded: inner)
            case 10: ecCurve = try Int(derEncoded: inner)
            case 701: creationDateTime = try Int(derEncoded: inner)
            case 702: origin = try Int(derEncoded: inner)
            case 704: rootOfTrust = try RootOfTrust(inner)
            case 705: osVersion = try Int(derEncoded: inner)
            case 706: osPatchLevel = try Int(derEncoded: inner)
            case 709:
                // An OCTET STRING holding the DER of the application id.
                let bytes = try ASN1OctetString(derEncoded: inner).bytes
                attestationApplicationID = try AttestationApplicationID(try DER.parse(Array(bytes)))
            case 718: vendorPatchLevel = try Int(derEncoded: inner)
            case 719: bootPatchLevel = try Int(derEncoded: inner)
            default: continue
            }
        }
    }

    public init() {}

    static func integers(_ node: ASN1Node) throws -> Set<Int> {
        guard case .constructed(let members) = node.content else { throw KeyDescription.malformed("not a SET OF INTEGER") }
        return Set(try members.map { try Int(derEncoded: $0) })
    }
}

/// The device's boot state as the secure hardware saw it.
public struct RootOfTrust: Sendable, Equatable {
    public enum VerifiedBootState: Int, Sendable, CustomStringConvertible {
        /// Google's (or the OEM's) key verified the whole boot chain.
        case verified = 0
        /// A user-installed key verified it.
        case selfSigned = 1
        /// The bootloader is unlocked: nothing is verified.
        case unverified = 2
        case failed = 3

        public var description: String {
            switch self {
            case .verified: "verified"
            case .selfSigned: "self-signed"
            case .unverified: "unverified"
            case .failed: "failed"
            }
        }
    }

    public var verifiedBootKey: [UInt8]
    public var deviceLocked: Bool
    public var verifiedBootState: VerifiedBootState
    /// From attestation version 3.
    public var verifiedBootHash: [UInt8]?

    init(_ node: ASN1Node) throws {
        guard case .constructed(let children) = node.content else { throw KeyDescription.malformed("rootOfTrust is not a SEQUENCE") }
        let fields = Array(children)
        guard fields.count >= 3 else { throw KeyDescription.malformed("rootOfTrust has \(fields.count) fields") }
        verifiedBootKey = Array(try ASN1OctetString(derEncoded: fields[0]).bytes)
        deviceLocked = try Bool(derEncoded: fields[1])
        let state = try Int(derEncoded: fields[2], withIdentifier: .enumerated)
        guard let known = VerifiedBootState(rawValue: state) else { throw KeyDescription.malformed("verified boot state \(state)") }
        verifiedBootState = known
        verifiedBootHash = fields.count > 3 ? Array(try ASN1OctetString(derEncoded: fields[3]).bytes) : nil
    }
}

/// Which app asked for the key: package names (with versions) and the SHA-256 digests of the
/// certificates that signed it.
public struct AttestationApplicationID: Sendable, Equatable {
    public struct Package: Sendable, Equatable {
        public var name: String
        public var version: Int

        public init(name: String, version: Int) {
            self.name = name
            self.version = version
        }
    }

    public var packages: [Package]
    public var signatureDigests: [[UInt8]]

    init(_ node: ASN1Node) throws {
        guard case .constructed(let children) = node.content else {
            throw KeyDescription.malformed("attestationApplicationId is not a SEQUENCE")
        }
        let fields = Array(children)
        guard fields.count == 2, case .constructed(let infos) = fields[0].content, case .constructed(let digests) = fields[1].content
        else { throw KeyDescription.malformed("attestationApplicationId has no package and digest sets") }
        packages = try infos.map { info in
            guard case .constructed(let parts) = info.content else { throw KeyDescription.malformed("a package info is not a SEQUENCE") }
            let values = Array(parts)
            guard values.count == 2 else { throw KeyDescription.malformed("a package info has \(values.count) fields") }
            let name = try ASN1OctetString(derEncoded: values[0]).bytes
            guard let text = String(strictUTF8: name) else { throw KeyDescription.malformed("a package name is not UTF-8") }
            return Package(name: text, version: try Int(derEncoded: values[1]))
        }
        signatureDigests = try digests.map { Array(try ASN1OctetString(derEncoded: $0).bytes) }
    }
}
