// SPDX-License-Identifier: Apache-2.0
import Foundation
import SignetTestSupport
import Testing

/// The deployment files the docs point to (`deploy/`) are ones the tools take: systemd's unit
/// passes `systemd-analyze verify`, nginx's configuration passes `nginx -t` — each with its paths
/// pointed at this machine's (the built `signet`, a throwaway certificate).
@Suite struct DeploymentFileTests {
    static let deploy = SignetProcess.repositoryRoot.appendingPathComponent("deploy")

    static func installed(_ tool: String) -> Bool {
        ["/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + tool) }
    }

    @Test(.enabled(if: installed("systemd-analyze"), "systemd-analyze is not installed"))
    func theSystemdUnitVerifies() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let unit = try String(contentsOf: Self.deploy.appendingPathComponent("signet.service"), encoding: .utf8)
            .replacingOccurrences(of: "/usr/local/bin/signet", with: SignetProcess.signetPath)
        let path = folder.appendingPathComponent("signet.service").path
        try unit.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await SignetProcess.run("systemd-analyze", ["verify", "--man=no", path])
        // Without a running systemd (a container), verify still parses and checks every directive.
        let problems = (result.stdout + result.stderr).split(separator: "\n").filter { line in
            line.contains("signet.service") && !line.contains("Failed to") && !line.contains("System has not been booted")
        }
        #expect(problems.isEmpty, "\(result.stdout)\(result.stderr)")
        #expect(unit.contains("ExecReload=/bin/kill -HUP $MAINPID") && unit.contains("LimitNOFILE=65536"))
    }

    @Test(.enabled(if: installed("nginx"), "nginx is not installed"))
    func theNginxConfigurationIsAcceptedByNginx() async throws {
        let folder = try SignetProcess.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let make = try await SignetProcess.run(
            "openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1", "-subj", "/CN=api.example.com",
                "-keyout", folder.appendingPathComponent("privkey.pem").path, "-out", folder.appendingPathComponent("fullchain.pem").path,
            ]
        )
        #expect(make.status == 0, "\(make.stderr)")
        let configuration = try String(contentsOf: Self.deploy.appendingPathComponent("nginx.conf"), encoding: .utf8)
            .replacingOccurrences(of: "/etc/ssl/api.example.com", with: folder.path)
            .replacingOccurrences(of: "/var/log/nginx/signet.log", with: folder.appendingPathComponent("access.log").path)
            .replacingOccurrences(of: "listen 443 ssl;", with: "listen 127.0.0.1:18443 ssl;")
        let path = folder.appendingPathComponent("nginx.conf").path
        // Where nginx writes while testing: the pid and error log of this prefix, not /var.
        try ("pid \(folder.path)/nginx.pid;\nerror_log \(folder.path)/error.log;\n" + configuration)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await SignetProcess.run("nginx", ["-t", "-p", folder.path, "-c", path])
        #expect(result.status == 0 && result.stderr.contains("test is successful"), "\(result.stderr)")
    }
}
