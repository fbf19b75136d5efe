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
import Testing

/// The console in a real browser: headless Chromium driven by Selenium (`Tests/Interop/console_browser.py`).
@Suite(.awaitsCleanups) struct OperatorConsoleBrowserTests {
    static var chromium: Bool {
        let present = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        precondition(present || ProcessInfo.processInfo.environment["CI"] == nil, "CI must install chromium and chromium-driver")
        return present && PythonPeer.available("selenium, requests")
    }

    /// The page an upstream serves on an open route (an upload, a documentation page, one XSS bug):
    /// its script tries to read the console with the operator's cookie and to revoke a device.
    static let attackPage = """
        <!doctype html><html><head><title>loading</title></head><body><script>
        (async () => {
          const consoleBase = decodeURIComponent(location.hash.slice(1));
          const device = new URLSearchParams(location.search).get("device");
          const result = {};
          try {
            const page = await fetch(consoleBase + "/signet/admin/devices/" + device, {credentials: "include"});
            const text = await page.text();
            result.read = page.status;
            const token = (text.match(/name="csrf" value="([^"]+)"/) || [])[1];
            result.tokenRead = !!token;
            if (token) {
              const form = new URLSearchParams({csrf: token, confirm: "yes"});
              const answer = await fetch(consoleBase + "/signet/admin/devices/" + device + "/revoke",
                {method: "POST", body: form, credentials: "include"});
              result.revoke = answer.status;
            }
          } catch (error) { result.readError = String(error); }
          try {
            await fetch(consoleBase + "/signet/admin/devices/" + device + "/revoke", {method: "POST", mode: "no-cors",
              credentials: "include", body: new URLSearchParams({csrf: "guessed", confirm: "yes"})});
            result.blindPost = "sent";
          } catch (error) { result.blindPost = String(error); }
          document.title = "done " + JSON.stringify(result);
        })();
        </script></body></html>
        """

    /// A real browser signed in to the console opens a page the upstream serves: with an admin
    /// listener, the page's script can neither read a console page nor change anything; on one
    /// listener (no `adminListener`), it can do both — the risk docs/gateway.md names.
    @Test(.enabled(if: chromium), arguments: [true, false])
    func aPageTheUpstreamServesCannotReachAConsoleOnItsOwnListener(separate: Bool) async throws {
        var logger = Logger(label: "signet.test")
        logger.logLevel = .error
        let router = Router()
        router.get("/pages/attack") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: Self.attackPage))
            )
        }
        let pages = try await BackgroundServer.start(logger: logger) { running in
            Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await running($0.localAddress?.port ?? 0) },
                logger: logger
            )
        }
        Cleanup.after { await pages.stop() }
        let harness = try await GatewayHarness.start { configuration in
            configuration.upstream = "http://127.0.0.1:\(pages.port)"
            configuration.routes.insert(.init(prefix: "/pages", access: .open), at: 0)
            if separate { configuration.adminListener = .init(listen: .init(host: "127.0.0.1", port: 0)) }
        }
        Cleanup.after { try await harness.stop() }
        let device = try await harness.register(.p256)
        let console = separate ? try #require(harness.adminBase) : harness.base
        let output = try await PythonPeer.run(
            "console_same_origin.py",
            [console, harness.base + "/pages/attack", GatewayHarness.adminToken, device.deviceID]
        )
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(seen["signedIn"] as? Bool == true)
        let status = try await harness.gateway.store.device(id: device.deviceID)?.status
        if separate {
            #expect(seen["read"] == nil && seen["readError"] != nil, "the console's pages are another origin's: \(seen)")
            #expect(seen["tokenRead"] == nil && seen["revoke"] == nil)
            #expect(status == .active, "the blind post was refused (csrf_invalid): \(seen)")
        } else {
            // Documented, not wanted: on one listener the page is the console's origin.
            #expect(seen["read"] as? Int == 200 && seen["tokenRead"] as? Bool == true, "\(seen)")
            #expect(status == .revoked, "a same-origin script revokes the device: \(seen)")
        }
    }

    @Test(.enabled(if: chromium))
    func anOperatorSignsInFindsADeviceRevokesItAndSeesItsNextRequestRefused() async throws {
        // A monitored route too: its would-be refusals have a table of their own on the overview.
        let harness = try await GatewayHarness.start { $0.routes.insert(.init(prefix: "/watched", access: .verified, mode: .monitor), at: 0) }
        Cleanup.after { try await harness.stop() }
        #expect(try await GatewayHarness.send(method: "GET", url: harness.base + "/watched").status == 404, "forwarded: the API has no such path")
        let device = try await harness.register(.p256)
        #expect(try await GatewayHarness.send(try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())).status == 201)
        // The request the device sends after its revocation, signed now, sent by the script.
        let next = try device.signer.sign(try harness.scorePost(), created: Date(), nonce: Nonce.random())
        let signed: [String: Any] = [
            "method": "POST", "url": harness.base + "/scores", "body": String(decoding: next.body, as: UTF8.self),
            "headers": Dictionary(
                next.fields.lines.filter { $0.name.lowercased() != "host" }.map { ($0.name, $0.value) },
                uniquingKeysWith: { a, _ in a }
            ),
        ]
        let file = harness.folder.appendingPathComponent("next-request.json")
        try JSONSerialization.data(withJSONObject: signed).write(to: file)
        var arguments = [harness.base, GatewayHarness.adminToken, device.deviceID, device.keyID, file.path]
        // `SIGNET_SCREENSHOTS=docs/console scripts/test.sh` refreshes the README's screenshots.
        if let folder = ProcessInfo.processInfo.environment["SIGNET_SCREENSHOTS"] { arguments += ["--screenshots", folder] }
        let output = try await PythonPeer.run("console_browser.py", arguments)
        let seen = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        #expect(seen["withoutSession"] as? Bool == true)
        #expect(seen["forgedCSRF"] as? String == "csrf_invalid")
        #expect(seen["nextRequest"] as? String == "key_revoked")
        #expect((seen["chartRefused"] as? Int ?? 0) >= 1)
        #expect((seen["monitored"] as? String)?.contains("signature_missing") == true, "\(seen["monitored"] ?? "none")")
        #expect(seen["audit"] as? String == "device.revoke")
        #expect(seen["signedOut"] as? Bool == true)
        // axe-core ran on every page (each with its passes counted) and found nothing.
        let axe = try #require(seen["axe"] as? [String: Int])
        #expect(Set(axe.keys) == ["sign-in", "devices", "device", "refusals", "overview", "users", "pin-reports", "keys", "audit"])
        #expect(axe.values.allSatisfy { $0 >= 20 }, "\(axe)")
        #expect(try await harness.gateway.store.device(id: device.deviceID)?.status == .revoked)
    }
}
