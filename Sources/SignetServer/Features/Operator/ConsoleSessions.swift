// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import SignetCore
import SignetStore

/// Operator console sessions: a random cookie value given once at sign-in, kept in the store only
/// as its SHA-256, with a form token (CSRF) of its own. Shared by every instance on the store.
struct ConsoleSessions: Sendable {
    static let cookieName = "signet_console"
    static let path = "/signet/admin/"

    let store: any SignetStorage
    let lifetime: TimeInterval
    /// `Secure` on the cookie: the gateway speaks HTTPS.
    let secure: Bool

    /// Creates a session; returns its cookie value (given to the browser, never stored) and record.
    func create(actor: String, now: Date) async throws -> (cookie: String, session: AdminSessionRecord) {
        let value = Self.random()
        let session = AdminSessionRecord(
            idHash: Self.hash(value),
            csrfToken: Self.random(),
            actor: actor,
            createdAt: now,
            expiresAt: now.addingTimeInterval(lifetime)
        )
        try await store.createAdminSession(session)
        return (value, session)
    }

    /// The live session the request's cookie names, if any.
    func session(for fields: HTTPFields, now: Date) async throws -> AdminSessionRecord? {
        guard let value = Self.cookieValue(in: fields) else { return nil }
        return try await store.adminSession(idHash: Self.hash(value), now: now)
    }

    func end(for fields: HTTPFields) async throws {
        guard let value = Self.cookieValue(in: fields) else { return }
        try await store.deleteAdminSession(idHash: Self.hash(value))
    }

    /// `Set-Cookie` for a new session: script cannot read it, other sites cannot send it, and it
    /// goes only to the console's own paths (never to a proxied upstream).
    func setCookie(_ value: String) -> String {
        "\(Self.cookieName)=\(value); Path=\(Self.path); Max-Age=\(Int(lifetime)); HttpOnly; SameSite=Strict"
            + (secure ? "; Secure" : "")
    }

    func clearCookie() -> String {
        "\(Self.cookieName)=; Path=\(Self.path); Max-Age=0; HttpOnly; SameSite=Strict" + (secure ? "; Secure" : "")
    }

    /// The console cookie's value; several `Cookie` fields or pairs are searched, the first wins.
    static func cookieValue(in fields: HTTPFields) -> String? {
        for field in fields[values: .cookie] {
            for pair in field.split(separator: ";") {
                let trimmed = pair.drop(while: { $0 == " " })
                guard trimmed.hasPrefix(cookieName + "=") else { continue }
                let value = trimmed.dropFirst(cookieName.count + 1)
                // 32 random bytes, base64url: anything else is not ours.
                guard value.count == 43, value.utf8.allSatisfy(Self.isBase64URL) else { return nil }
                return String(value)
            }
        }
        return nil
    }

    static func random() -> String {
        Base64.urlEncode(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    static func hash(_ value: String) -> String {
        Hex.encode(SHA256.hash(data: Array(value.utf8)))
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
