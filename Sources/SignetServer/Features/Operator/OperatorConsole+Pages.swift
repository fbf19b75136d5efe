// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware
import SignetStore

/// The console's pages: each reads what it shows from the store (one index range each) and renders
/// its template.
extension OperatorConsole {
    func overview(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let lastMinute = ActivityCount.minute(of: clock())
        // A day of quarter-hours from the current one back: up to 14 minutes more than a day.
        let counts = try await store.activityCounts(since: lastMinute - 1_440 - 15)
        let hour = ActivityChart(title: "last hour", counts: counts, lastMinute: lastMinute, minutes: 60, bucketMinutes: 1, tickMinutes: 10)
        let day = ActivityChart(title: "last day", counts: counts, lastMinute: lastMinute, minutes: 1_440, bucketMinutes: 15, tickMinutes: 180)
        let reasons = RefusalBreakdown(counts: counts, lastMinute: lastMinute).rows
        let monitored = RefusalBreakdown(counts: counts, lastMinute: lastMinute, outcome: "monitored").rows
        return render(
            "overview",
            layout(session, "Overview", nav: "overview").merging([
                "hour": Self.chart(hour, id: "hour"), "day": Self.chart(day, id: "day"),
                "hasReasons": !reasons.isEmpty,
                "reasons": Self.reasonRows(reasons),
                "hasMonitored": !monitored.isEmpty,
                "monitored": Self.reasonRows(monitored),
            ]) { $1 }
        )
    }

    static func reasonRows(_ rows: [RefusalBreakdown.Row]) -> [[String: Any]] {
        rows.map { ["reason": $0.reason, "lastHour": $0.lastHour, "lastDay": $0.lastDay, "barWidth": $0.barWidth] }
    }

    static func chart(_ chart: ActivityChart, id: String) -> [String: Any] {
        let f = ActivityChart.format
        let base = ActivityChart.top + ActivityChart.plotHeight
        return [
            "id": id, "title": chart.title, "width": ActivityChart.width, "height": ActivityChart.height,
            "summary": chart.summary, "unit": chart.unit, "acceptedPath": chart.acceptedPath,
            "refusedPath": chart.refusedPath, "accepted": chart.accepted, "refused": chart.refused, "peak": chart.peak,
            "left": f(ActivityChart.left), "plotRight": f(ActivityChart.left + ActivityChart.plotWidth), "baseY": f(base),
            "markY": f(base + 4), "textY": f(base + 17), "midY": f(ActivityChart.top + ActivityChart.plotHeight / 2),
            "yTicks": chart.yTicks.map { ["y": f($0.position), "labelY": f($0.position + 4), "labelX": f(ActivityChart.left - 6), "label": $0.label] },
            "xTicks": chart.xTicks.map { ["x": f($0.position), "label": $0.label] },
        ]
    }

    func devices(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let query = String((request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespaces).prefix(256))
        let after = request.uri.queryParameters.get("after").flatMap { DeviceListing.Cursor(text: String($0)) }
        let page = try await store.listDevices(DeviceListing(search: query, after: after, limit: Self.pageSize))
        var next: String?
        if page.count == Self.pageSize, let last = page.last {
            let cursor = DeviceListing.Cursor(createdAt: last.createdAt, deviceID: last.deviceID).text
            next = "after=\(Self.segment(cursor))" + (query.isEmpty ? "" : "&q=\(Self.segment(query))")
        }
        return render(
            "devices",
            layout(session, "Devices", nav: "devices").merging([
                "query": query, "hasDevices": !page.isEmpty, "devices": page.map(Self.deviceRow), "next": next ?? false,
                "debugDevices": allowDebugDevices,
            ]) { $1 }
        )
    }

    static func deviceRow(_ device: DeviceRecord) -> [String: Any] {
        [
            "deviceID": device.deviceID, "linkID": segment(device.deviceID), "keyID": device.keyID,
            "user": device.user ?? "—", "trustLevel": device.trustLevel.rawValue, "algorithm": device.algorithm,
            "status": device.status.rawValue, "registered": time(device.createdAt), "revoked": time(device.revokedAt),
            "lastSeen": time(device.lastSeenAt), "counter": String(device.counter),
            "riskMetric": device.riskMetric.map(String.init) ?? "—",
        ]
    }

    func device(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let id = Self.parameter(context, "id")
        guard let device = try await store.device(id: id) else {
            return refuse(SignetError(.notFound, "no device \(id)"), request, context, session)
        }
        var row = Self.deviceRow(device)
        row["active"] = device.status == .active
        row["csrf"] = session.csrfToken
        // The stored receipt itself is Apple's business; its summary is shown, never the bytes.
        row["attributes"] = device.attributes.filter { $0.key != "receipt" }.sorted { $0.key < $1.key }.map {
            ["name": $0.key, "value": $0.value]
        }
        if let receipt = try await store.receipt(deviceID: id) {
            row["receipt"] =
                [
                    "kind": receipt.kind, "created": Self.time(receipt.createdAt), "expires": Self.time(receipt.expiresAt),
                    "refresh": Self.time(receipt.refreshAt), "failures": receipt.failures > 0 ? receipt.failures : false,
                ] as [String: Any]
        }
        var values = layout(session, "Device \(device.deviceID)", nav: "devices")
        values["device"] = row
        if request.uri.queryParameters.get("revoked") != nil, device.status == .revoked {
            values["notice"] = "Device revoked."
        }
        return render("device", values)
    }

    /// The users who log in with a password, by name, each linked to the devices registered for them.
    /// Never a hash: what a user logs in with is said by scheme.
    func users(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let after = request.uri.queryParameters.get("after").map { String($0.prefix(256)) }.flatMap { $0.isEmpty ? nil : $0 }
        let page = try await store.listAccounts(after: after, limit: Self.pageSize)
        var next: String?
        if page.count == Self.pageSize, let last = page.last { next = "after=\(Self.segment(last.name))" }
        return render(
            "users",
            layout(session, "Users", nav: "users").merging([
                "after": after ?? false, "hasUsers": !page.isEmpty, "next": next ?? false,
                "users": page.map { account -> [String: Any] in
                    let digests = DigestAlgorithm.allCases.filter { account.digests[$0] != nil }.map(\.rawValue)
                    let schemes = (account.basicHash == nil ? [] : ["Basic"]) + (digests.isEmpty ? [] : ["Digest " + digests.joined(separator: ", ")])
                    return [
                        "name": account.name, "linkName": Self.segment(account.name), "realm": account.realm,
                        "schemes": schemes.isEmpty ? "—" : schemes.joined(separator: "; "),
                        "created": Self.time(account.createdAt), "updated": Self.time(account.updatedAt),
                    ]
                },
            ]) { $1 }
        )
    }

    func refusals(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let reason = request.uri.queryParameters.get("reason").map { String($0.prefix(64)) }.flatMap { $0.isEmpty ? nil : $0 }
        let before = request.uri.queryParameters.get("before").flatMap { Int64($0) }
        let page = try await store.refusals(reason: reason, before: before, limit: Self.pageSize)
        var next: String?
        if page.count == Self.pageSize, let last = page.last {
            next = "before=\(last.id)" + (reason.map { "&reason=\(Self.segment($0))" } ?? "")
        }
        // The first page leads with the latest refusals grouped; older pages are the rows alone.
        let groups = before == nil
            ? RefusalGroups(try await store.refusals(reason: reason, before: nil, limit: RefusalGroups.window)) : nil
        return render(
            "refusals",
            layout(session, "Refusals", nav: "refusals").merging([
                "reason": reason ?? "", "hasRefusals": !page.isEmpty, "next": next ?? false,
                "hasGroups": groups.map { !$0.groups.isEmpty } ?? false, "grouped": groups?.total ?? 0,
                "groups": (groups?.groups ?? []).map {
                    [
                        "reason": $0.reason, "status": $0.status, "method": $0.method, "path": $0.path, "count": $0.count,
                        "sources": $0.sources, "instances": $0.instancesText, "last": Self.time($0.last),
                        "monitored": $0.monitored,
                        "advice": $0.advice,
                    ] as [String: Any]
                },
                "refusals": page.map {
                    [
                        "time": Self.time($0.at), "reason": $0.reason, "status": $0.status, "method": $0.method,
                        "path": $0.path, "keyID": $0.keyID ?? "—", "source": $0.source ?? "—", "instance": $0.instance ?? "—",
                        "monitored": $0.monitored,
                    ] as [String: Any]
                },
            ]) { $1 }
        )
    }

    func pinReports(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let hosts = try await store.pinReportHosts(limit: 100)
        let reports = try await store.pinReports(limit: Self.pageSize)
        let groups = try await store.pinReportGroupCount()
        return render(
            "pin-reports",
            layout(session, "Pin reports", nav: "pinReports").merging([
                "hasHosts": !hosts.isEmpty, "hasReports": !reports.isEmpty,
                "groups": groups, "groupLimit": pinReportGroupLimit, "full": groups >= pinReportGroupLimit,
                "hosts": hosts.map { ["hostname": $0.hostname, "count": $0.count] as [String: Any] },
                "reports": reports.map {
                    [
                        "linkID": Self.segment($0.id), "lastSeen": Self.time($0.lastSeen), "hostname": $0.hostname,
                        "reason": $0.reason, "count": $0.count, "source": $0.source ?? "—",
                    ] as [String: Any]
                },
            ]) { $1 }
        )
    }

    func pinReport(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let id = Self.parameter(context, "id")
        guard let report = try await store.pinReport(id: id) else {
            return refuse(SignetError(.notFound, "no pin report \(id)"), request, context, session)
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(report.json.utf8))) as? [String: Any] ?? [:]
        var values = layout(session, "Pin reports for \(report.hostname)", nav: "pinReports")
        values["report"] = [
            "firstSeen": Self.time(report.firstSeen), "lastSeen": Self.time(report.lastSeen), "count": report.count,
            "hostname": report.hostname, "reason": report.reason, "source": report.source ?? "—",
            "servedPins": report.servedPins.split(separator: " ").map(String.init),
            "servedChain": (object["served-certificate-chain"] as? [Any] ?? []).compactMap { $0 as? String }
                .filter { $0.hasPrefix("-----BEGIN") },
            "expectedPins": (object["known-pins"] as? [Any] ?? []).compactMap { $0 as? String },
            "json": report.json,
        ] as [String: Any]
        return render("pin-report", values)
    }

    func keysPage(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let now = clock()
        var warnings: [String] = []
        let rows = keys.entries.map { entry -> [String: Any] in
            let status = GatewayKeyInventory.status(of: entry, at: now)
            if status == "expired" || status == "expires soon" {
                warnings.append("The \(entry.role) \(entry.name) \(status == "expired" ? "has expired" : "expires") \(Self.time(entry.notAfter)).")
            }
            return [
                "role": entry.role, "name": entry.name, "algorithm": entry.algorithm, "notBefore": Self.time(entry.notBefore),
                "notAfter": Self.time(entry.notAfter), "status": status,
                "statusClass": status.replacingOccurrences(of: " ", with: "-"),
            ]
        }
        return render("keys", layout(session, "Keys", nav: "keys").merging(["keys": rows, "warnings": warnings]) { $1 })
    }

    func auditPage(_ request: Request, _ context: SignetRequestContext, _ session: AdminSessionRecord) async throws
        -> Response
    {
        let before = request.uri.queryParameters.get("before").flatMap { Int64($0) }
        let entries = try await store.auditRecords(before: before, limit: Self.pageSize)
        let next = entries.count == Self.pageSize ? entries.last.map { "before=\($0.id)" } : nil
        return render(
            "audit",
            layout(session, "Audit log", nav: "audit").merging([
                "next": next ?? false,
                "entries": entries.map {
                    [
                        "time": Self.time($0.at), "actor": $0.actor, "action": $0.action,
                        "target": $0.target.isEmpty ? "—" : $0.target, "source": $0.source ?? "—",
                    ]
                },
            ]) { $1 }
        )
    }
}
