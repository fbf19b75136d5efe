// SPDX-License-Identifier: Apache-2.0
import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import SignetCore
import SignetServer
import SignetStore
import SignetTestSupport
import SignetMiddleware
import Testing

/// What the console's pages show once the activity is written: the audit of a revocation, and what
/// an attacker puts in front of an operator (the flush is asked for, not waited on).
@Suite(.awaitsCleanups) struct OperatorConsoleAuditTests {
    @Test func revokingADeviceTakesASessionTheFormTokenAndAConfirmationAndIsAudited() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        var answer = try await GatewayHarness.send(
            try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        )
        #expect(answer.status == 201)
        try await OperatorConsoleTests.settle(harness)

        let browser = OperatorConsoleTests.Browser(base: harness.base)
        _ = try await browser.signIn()
        let page = try await browser.get("/signet/admin/devices/\(device.deviceID)")
        #expect(page.status == 200 && page.text.contains("id=\"device-status\" class=\"status-active\">active<"))
        #expect(page.text.contains(device.keyID) && page.text.contains("device-key"))
        #expect(!page.text.contains("<dt>Last seen</dt><dd>—</dd>"), "the accepted request was seen")
        let list = try await browser.get("/signet/admin/devices?q=\(device.keyID)")
        #expect(list.text.contains(device.deviceID))
        #expect(try await browser.get("/signet/admin/devices?q=nobody").text.contains("No devices"))
        #expect(try await browser.get("/signet/admin/devices/dev_nobody").status == 404)

        let path = "/signet/admin/devices/\(device.deviceID)/revoke"
        let csrf = try await browser.csrf()
        // Without a session, with a forged token, from another site, or unconfirmed: refused, nothing changes.
        answer = try await OperatorConsoleTests.Browser(base: harness.base).post(path, [("csrf", csrf), ("confirm", "yes")])
        #expect(answer.status == 401 && answer.text.contains("admin_unauthorized"))
        answer = try await browser.post(path, [("csrf", String(csrf.reversed())), ("confirm", "yes")])
        #expect(answer.status == 403 && answer.text.contains("csrf_invalid"))
        answer = try await browser.post(path, [("confirm", "yes")])
        #expect(answer.status == 403 && answer.text.contains("csrf_invalid"))
        browser.origin = "http://evil.example"
        answer = try await browser.post(path, [("csrf", csrf), ("confirm", "yes")])
        #expect(answer.status == 403 && answer.text.contains("csrf_invalid"))
        browser.origin = harness.base
        answer = try await browser.post(path, [("csrf", csrf)])
        #expect(answer.status == 400 && answer.text.contains("request_invalid"))
        answer = try await GatewayHarness.send(
            try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        )
        #expect(answer.status == 201, "still active after every refused revocation")

        answer = try await browser.post(path, [("csrf", csrf), ("confirm", "yes")])
        #expect(answer.status == 303)
        let revoked = try await browser.get(try #require(answer.headers.first(name: "Location")))
        #expect(revoked.text.contains("Device revoked.") && revoked.text.contains("class=\"status-revoked\">revoked<"))
        #expect(!revoked.text.contains("id=\"revoke\""), "no second revocation offered")
        answer = try await GatewayHarness.send(
            try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        )
        #expect(answer.status == 401 && answer.reason == "key_revoked")
        try await OperatorConsoleTests.settle(harness)

        let refusals = try await browser.get("/signet/admin/refusals?reason=key_revoked").text
        #expect(refusals.contains("<code>key_revoked</code>") && refusals.contains(device.keyID))
        #expect(refusals.contains("<code>POST /scores</code>"))
        let instance = harness.gateways[0].gateway.configuration.instanceName
        #expect(refusals.contains("<td>\(instance)</td>"), "each refusal names the instance that refused it")
        let overview = try await browser.get("/signet/admin/overview").text
        #expect(overview.contains("refusals?reason=key_revoked"))
        #expect(overview.contains("refusals?reason=csrf_invalid"), "console refusals are counted too")
        let audit = try await browser.get("/signet/admin/audit").text
        #expect(audit.contains("<code>device.revoke</code></td><td>\(device.deviceID)</td>"))
    }

    @Test func whatAnAttackerSendsIsShownEscapedNeverRun() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let payload = "\"><script>alert(1)</script>"
        let signature = "sig1=(\"@method\");created=1;keyid=\"<script>alert(1)</script>\""
        let answer = try await GatewayHarness.send(
            method: "POST",
            url: harness.base + "/scores/%3Cimg%20src=x%20onerror=alert(2)%3E",
            headers: [("Signature-Input", signature), ("Signature", "sig1=:AAAA:")],
            body: Array("{}".utf8)
        )
        #expect(answer.status >= 400)
        try await OperatorConsoleTests.settle(harness)
        let browser = OperatorConsoleTests.Browser(base: harness.base)
        _ = try await browser.signIn()
        let page = try await browser.get("/signet/admin/refusals").text
        #expect(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.contains("<script>") && !page.contains("<img"))
        let search = try await browser.get("/signet/admin/devices?q=\(OperatorConsoleTests.Browser.encode(payload))").text
        #expect(search.contains("value=\"&quot;&gt;&lt;script&gt;") && !search.contains("<script>"))
        // A refusal never keeps a query string's secrets… only the path.
        #expect(!page.contains("AAAA"))
    }

    /// A revocation through the admin API is audited like one through the console, naming which
    /// admin token acted (a digest of it, never the token).
    @Test func aRevocationThroughTheAdminAPIIsAuditedWithItsActor() async throws {
        let harness = try await GatewayHarness.start(transport: .router)
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let revoked = try await GatewayHarness.send(
            method: "DELETE",
            url: harness.base + "/signet/v1/devices/\(device.deviceID)",
            headers: [("Authorization", "Bearer \(GatewayHarness.adminToken)")]
        )
        #expect(revoked.status == 204)
        try await OperatorConsoleTests.settle(harness)
        let records = try await harness.store.auditRecords(before: nil, limit: 10)
        let record = try #require(records.first { $0.action == "device.revoke" }, "\(records)")
        #expect(record.actor == AdminToken(GatewayHarness.adminToken).actor && record.actor.hasPrefix("admin-token "), "\(record)")
        let browser = OperatorConsoleTests.Browser(base: harness.base)
        _ = try await browser.signIn()
        let audit = try await browser.get("/signet/admin/audit").text
        #expect(audit.contains("<code>device.revoke</code></td><td>\(device.deviceID)</td>") && !audit.contains(GatewayHarness.adminToken))
    }

}
