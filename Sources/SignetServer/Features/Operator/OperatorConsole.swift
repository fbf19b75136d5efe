// SPDX-License-Identifier: Apache-2.0
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import NIOCore
import SignetCore
import SignetMiddleware
import SignetStore
import SwiftASN1
import X509

/// The operator console under `/signet/admin/`: server-rendered pages of activity, devices, users,
/// refusals, pin reports, keys and the audit log, and device revocation.
///
/// Served only when an admin credential is configured: the admin token, or the pins of operators'
/// client certificates (mutual TLS). Signing in gives a session cookie (``ConsoleSessions``); a
/// session from a certificate holds only while that certificate is presented, so its cookie alone is
/// worth nothing. Every change carries the session's form token and a same-origin `Origin`, and is
/// written to the audit log. Pages set a Content-Security-Policy that allows no script and no
/// inline style: nothing here needs either.
struct OperatorConsole: Sendable {
    let store: any SignetStorage
    /// The admin token and the failed attempts per source that the console shares with the admin API.
    let admin: AdminAccess
    /// Pins of the operators' client certificates; empty when only the token signs in.
    let adminCertificates: Set<SPKIPin>
    let sessions: ConsoleSessions
    let keys: GatewayKeyInventory
    let keyCache: DeviceKeyCache
    let metrics: SignetMetrics
    let library: MustacheLibrary
    /// `maxPinReportGroups`: the pin-report page says when the store is full.
    let pinReportGroupLimit: Int
    /// `allowDebugDevices`: the devices page offers the debug-device form.
    let allowDebugDevices: Bool
    let clock: @Sendable () -> Date

    static let pageSize = 50
    static let formLimit = 8 * 1024

    /// - Parameters:
    ///   - secure: Whether the console's listener speaks HTTPS (its cookies are then `Secure`).
    ///   - keys: What the Keys page lists.
    init(
        dependencies: FeatureDependencies,
        adminCertificates: Set<SPKIPin>,
        secure: Bool,
        keys: GatewayKeyInventory
    ) throws {
        store = dependencies.store
        admin = dependencies.admin
        self.adminCertificates = adminCertificates
        sessions = ConsoleSessions(store: dependencies.store, lifetime: 8 * 3_600, secure: secure)
        self.keys = keys
        keyCache = dependencies.keyCache
        metrics = dependencies.metrics
        library = try ConsoleTemplates.library()
        pinReportGroupLimit = dependencies.configuration.maxPinReportGroups
        allowDebugDevices = dependencies.configuration.allowDebugDevices
        clock = dependencies.clock
    }

    func add(to router: Router<SignetRequestContext>) {
        let console = router.group("/signet/admin")
        console.get("/") { request, context in
            try await session(request, context) == nil
                ? Self.redirect("/signet/admin/sign-in") : Self.redirect("/signet/admin/overview")
        }
        console.get("/console.css") { _, _ in
            var headers = Self.securityHeaders
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "max-age=3600"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: ConsoleTemplates.stylesheet)))
        }
        console.get("/icon.svg") { _, _ in
            var headers = Self.securityHeaders
            headers[.contentType] = "image/svg+xml"
            headers[.cacheControl] = "max-age=86400"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: ConsoleTemplates.icon)))
        }
        console.get("/sign-in") { _, _ in render("sign-in", signInValues()) }
        console.post("/sign-in") { request, context in try await signIn(request, context) }
        console.post("/sign-out") { request, context in
            try await change(request, context) { session, _ in
                try await sessions.end(for: request.headers)
                try await audit(session, "console.sign-out", target: "", context)
                var response = Self.redirect("/signet/admin/sign-in")
                response.headers[.setCookie] = sessions.clearCookie()
                return response
            }
        }
        console.get("/overview") { request, context in try await page(request, context, overview) }
        console.get("/devices") { request, context in try await page(request, context, devices) }
        console.get("/devices/:id") { request, context in try await page(request, context, device) }
        console.post("/devices/debug") { request, context in try await addDebugDevice(request, context) }
        console.post("/devices/:id/revoke") { request, context in try await revoke(request, context) }
        console.get("/users") { request, context in try await page(request, context, users) }
        console.get("/refusals") { request, context in try await page(request, context, refusals) }
        console.get("/pin-reports") { request, context in try await page(request, context, pinReports) }
        console.get("/pin-reports/:id") { request, context in try await page(request, context, pinReport) }
        console.get("/keys") { request, context in try await page(request, context, keysPage) }
        console.get("/audit") { request, context in try await page(request, context, auditPage) }
    }

    // MARK: Sessions and changes

    private func signIn(_ request: Request, _ context: SignetRequestContext) async throws -> Response {
        let now = clock()
        do {
            try await admin.checkAttempts(from: context.clientAddress, now: now)
        } catch let error as SignetError {
            return refuse(error, request, context)
        }
        guard Self.isSameOrigin(request) else {
            return refuse(SignetError(.csrfInvalid, "the sign-in came from another site"), request, context)
        }
        let form = try await Self.form(request, context)
        let actor: String
        do {
            actor =
                try await form["method"] == "certificate"
                ? certificateActor(context, now: now) : await tokenActor(form, source: context.clientAddress, now: now)
        } catch let error as SignetError {
            // A token's failure was counted with its comparison; a certificate's is counted here.
            if form["method"] == "certificate", error.code != .rateLimited {
                await admin.recordFailure(from: context.clientAddress, now: now)
            }
            var response = refuse(error, request, context)
            var values = signInValues()
            values["error"] = "\(error.reason) (\(error.code.rawValue))."
            response.body = .init(byteBuffer: ByteBuffer(string: html("sign-in", values)))
            return response
        }
        let (cookie, session) = try await sessions.create(actor: actor, now: now)
        try await audit(session, "console.sign-in", target: "", context)
        var response = Self.redirect("/signet/admin/overview")
        response.headers[.setCookie] = sessions.setCookie(cookie)
        return response
    }

    private func tokenActor(_ form: [String: String], source: String?, now: Date) async throws -> String {
        guard admin.token.token != nil else {
            throw SignetError(.adminUnauthorized, "this console takes client certificates only")
        }
        guard try await admin.attempt(from: source, now: now, check: { admin.token.matches(form["token"] ?? "") }) else {
            throw SignetError(.adminUnauthorized, "That admin token is wrong")
        }
        return admin.token.actor
    }

    /// `certificate sha256/<pin>`: the TLS handshake proved the client holds the certificate's key;
    /// here the key must be one of the configured operators'. The pin is the credential (removing it
    /// revokes it): the handshake accepts self-signed certificates, so the holder of a pinned key could
    /// issue itself new dates, and the validity period is checked only so that a lapsed certificate
    /// is noticed, not as a limit.
    private func certificateActor(_ context: SignetRequestContext, now: Date) async throws -> String {
        guard !adminCertificates.isEmpty else {
            throw SignetError(.adminUnauthorized, "this console takes no client certificates")
        }
        guard let der = try? await context.peerCertificateDER() else {
            throw SignetError(.clientCertificateRequired, "No client certificate was presented")
        }
        guard let pin = try? SPKIPin(certificateDER: der), adminCertificates.contains(pin) else {
            throw SignetError(.adminUnauthorized, "That client certificate is not an operator's")
        }
        // RFC 5280 §4.1.2.5: both ends of the period are inside it.
        guard let certificate = try? Certificate(derEncoded: der), certificate.notValidBefore <= now,
            now <= certificate.notValidAfter
        else {
            throw SignetError(.clientCertificateUntrusted, "That client certificate is outside its validity period")
        }
        return Self.actor(of: pin)
    }

    /// Who a certificate's session is, in the store and the audit log.
    static func actor(of pin: SPKIPin) -> String { "certificate \(pin)" }

    private func signInValues() -> [String: Any] {
        ["title": "Sign in", "token": admin.token.token != nil, "certificate": !adminCertificates.isEmpty && sessions.secure]
    }

    /// The request's live session: its cookie, and the credential that made it still configured —
    /// the same token, or the same pinned certificate presented on this connection.
    private func session(_ request: Request, _ context: SignetRequestContext) async throws -> AdminSessionRecord? {
        guard let session = try await sessions.session(for: request.headers, now: clock()) else { return nil }
        guard session.actor.hasPrefix("certificate ") else {
            // A session of a token ends when the token is changed or removed, on every instance.
            return admin.token.token != nil && admin.token.actor == session.actor ? session : nil
        }
        guard let der = try? await context.peerCertificateDER(), let pin = try? SPKIPin(certificateDER: der),
            session.actor == Self.actor(of: pin), adminCertificates.contains(pin)
        else { return nil }
        return session
    }

    /// A page for a signed-in operator; without a session, the sign-in page.
    private func page(
        _ request: Request,
        _ context: SignetRequestContext,
        _ body: (Request, SignetRequestContext, AdminSessionRecord) async throws -> Response
    ) async throws -> Response {
        guard let session = try await session(request, context) else {
            return Self.redirect("/signet/admin/sign-in")
        }
        return try await body(request, context, session)
    }

    /// A change: needs a session, a same-origin request, and the session's form token.
    private func change(
        _ request: Request,
        _ context: SignetRequestContext,
        _ body: (AdminSessionRecord, [String: String]) async throws -> Response
    ) async throws -> Response {
        guard let session = try await session(request, context) else {
            return refuse(SignetError(.adminUnauthorized, "sign in to make changes"), request, context)
        }
        guard Self.isSameOrigin(request) else {
            return refuse(SignetError(.csrfInvalid, "the change came from another site"), request, context, session)
        }
        let form = try await Self.form(request, context)
        guard let token = form["csrf"], ConstantTime.equals(Array(token.utf8), Array(session.csrfToken.utf8)) else {
            return refuse(SignetError(.csrfInvalid, "the form token is missing or not this session's"), request, context, session)
        }
        return try await body(session, form)
    }

    private func audit(_ session: AdminSessionRecord, _ action: String, target: String, _ context: SignetRequestContext)
        async throws
    {
        try await store.appendAudit(
            AuditRecord(at: clock(), actor: session.actor, action: action, target: target, source: context.clientAddress)
        )
    }

    private func revoke(_ request: Request, _ context: SignetRequestContext) async throws -> Response {
        try await change(request, context) { session, form in
            let id = Self.parameter(context, "id")
            guard form["confirm"] == "yes" else {
                return refuse(SignetError(.requestInvalid, "tick the box to confirm the revocation"), request, context, session)
            }
            guard try await store.revokeDevice(id: id, at: clock(), by: session.actor, source: context.clientAddress) else {
                return refuse(SignetError(.notFound, "no device \(id)"), request, context, session)
            }
            keyCache.invalidateAll()
            return Self.redirect("/signet/admin/devices/\(Self.segment(id))?revoked=1")
        }
    }

    /// A debug device by its public key (`DebugDeviceProvider` prints it), where the gateway
    /// allows them; audited as `device.debug.add`, like `POST /signet/v1/devices/debug`.
    private func addDebugDevice(_ request: Request, _ context: SignetRequestContext) async throws -> Response {
        try await change(request, context) { session, form in
            guard allowDebugDevices else {
                return refuse(SignetError(.trustLevelInsufficient, "this gateway takes no debug devices (allowDebugDevices)"), request, context, session)
            }
            let device: DeviceRecord
            do {
                let registration = try DebugDeviceRegistration(name: form["name"] ?? "", publicKeyText: form["publicKey"] ?? "")
                device = try registration.record(now: clock())
                try await store.registerDevice(device)
            } catch let error as SignetError {
                return refuse(error, request, context, session)
            }
            try await audit(session, "device.debug.add", target: device.deviceID, context)
            keyCache.invalidateAll()
            return Self.redirect("/signet/admin/devices/\(Self.segment(device.deviceID))?added=1")
        }
    }

    // MARK: Rendering

    func layout(_ session: AdminSessionRecord, _ title: String, nav: String) -> [String: Any] {
        ["title": title, "session": true, "csrf": session.csrfToken, "nav": [nav: true]]
    }

    func html(_ template: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: template) ?? ""
    }

    func render(_ template: String, _ values: [String: Any], status: HTTPResponse.Status = .ok) -> Response {
        var headers = Self.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html(template, values))))
    }

    /// An HTML page with the reason code, counted and kept as a refusal like any other.
    func refuse(
        _ error: SignetError,
        _ request: Request,
        _ context: SignetRequestContext,
        _ session: AdminSessionRecord? = nil
    ) -> Response {
        metrics.recordRefusal(
            error.code,
            method: request.method.rawValue,
            path: request.uri.path,
            keyID: nil,
            source: context.clientAddress
        )
        var values: [String: Any] = ["title": "Refused", "reason": error.code.rawValue, "detail": error.reason]
        if let session { values.merge(layout(session, "Refused", nav: "")) { old, _ in old } }
        var response = render("problem", values, status: HTTPResponse.Status(code: error.code.httpStatus))
        if let seconds = error.retryAfterSeconds { response.headers[.retryAfter] = String(max(1, seconds)) }
        return response
    }

    /// No script, no inline style, no framing, forms only to the console itself.
    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy:
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        .xContentTypeOptions: "nosniff",
        // Not `no-referrer`: with it, Chromium sends `Origin: null` on the console's own form posts.
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]

    static func redirect(_ location: String) -> Response {
        var headers = securityHeaders
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    // MARK: Input

    /// `Sec-Fetch-Site` (or, from a browser too old for it, `Origin`) must name this gateway: a page
    /// of another site can forge neither. A client without both is no browser, so it carries no
    /// ambient cookie a page could ride on; the form token still applies.
    static func isSameOrigin(_ request: Request) -> Bool {
        if let site = request.headers[HTTPField.Name("Sec-Fetch-Site")!] { return site == "same-origin" }
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority, let components = URLComponents(string: origin),
            let originHost = components.host
        else { return false }
        let originAuthority = components.port.map { "\(originHost):\($0)" } ?? originHost
        return originAuthority.lowercased() == host.lowercased()
    }

    /// An `application/x-www-form-urlencoded` body of at most ``formLimit`` bytes; the first of a repeated name wins.
    static func form(_ request: Request, _ context: SignetRequestContext) async throws -> [String: String] {
        let body = try await request.body.collect(upTo: formLimit)
        var fields: [String: String] = [:]
        let decode = { (text: Substring) in String(decoding: FormURLEncoding.decode(String(text)), as: UTF8.self) }
        for pair in String(buffer: body).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = decode(parts[0])
            guard fields[name] == nil else { continue }
            fields[name] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return fields
    }

    static func parameter(_ context: SignetRequestContext, _ name: String) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func segment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static func time(_ date: Date?) -> String {
        guard let date else { return "—" }
        return JSONResponse.rfc3339(date)
    }
}
