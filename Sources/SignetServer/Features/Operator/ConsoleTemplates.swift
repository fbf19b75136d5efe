// SPDX-License-Identifier: Apache-2.0
import Mustache

/// The console's pages as Mustache templates (HTML-escaped by default: `{{…}}` never emits markup).
/// Every page extends `layout`; no inline script or style, so the Content-Security-Policy can forbid both.
enum ConsoleTemplates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in templates { try library.register(text, named: name) }
        return library
    }

    static let templates: [(String, String)] = [
        ("layout", layout), ("sign-in", signIn), ("overview", overview), ("devices", devices), ("device", device), ("users", users),
        ("refusals", refusals), ("pin-reports", pinReports), ("pin-report", pinReport), ("keys", keys),
        ("audit", audit), ("problem", problem),
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Signet console</title>
        <link rel="stylesheet" href="/signet/admin/console.css">
        <link rel="icon" href="/signet/admin/icon.svg" type="image/svg+xml">
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
        <p class="brand">Signet console</p>
        {{#session}}
        <nav aria-label="Console">
        <ul>
        <li><a href="/signet/admin/overview"{{#nav.overview}} aria-current="page"{{/nav.overview}}>Overview</a></li>
        <li><a href="/signet/admin/devices"{{#nav.devices}} aria-current="page"{{/nav.devices}}>Devices</a></li>
        <li><a href="/signet/admin/users"{{#nav.users}} aria-current="page"{{/nav.users}}>Users</a></li>
        <li><a href="/signet/admin/refusals"{{#nav.refusals}} aria-current="page"{{/nav.refusals}}>Refusals</a></li>
        <li><a href="/signet/admin/pin-reports"{{#nav.pinReports}} aria-current="page"{{/nav.pinReports}}>Pin reports</a></li>
        <li><a href="/signet/admin/keys"{{#nav.keys}} aria-current="page"{{/nav.keys}}>Keys</a></li>
        <li><a href="/signet/admin/audit"{{#nav.audit}} aria-current="page"{{/nav.audit}}>Audit log</a></li>
        </ul>
        </nav>
        <form method="post" action="/signet/admin/sign-out" class="sign-out">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Sign out</button>
        </form>
        {{/session}}
        </header>
        <main id="main">
        <h1>{{title}}</h1>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{$content}}{{/content}}
        </main>
        </body>
        </html>
        """

    static let signIn = """
        {{<layout}}{{$content}}
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        {{#token}}
        <form method="post" action="/signet/admin/sign-in">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
        <button type="submit">Sign in</button>
        </form>
        {{/token}}
        {{#certificate}}
        <form method="post" action="/signet/admin/sign-in">
        <input type="hidden" name="method" value="certificate">
        <p>Or with the operator client certificate your browser presented to this gateway.</p>
        <button type="submit">Sign in with my certificate</button>
        </form>
        {{/certificate}}
        {{/content}}{{/layout}}
        """

    /// A table of reason codes with their counts over the last hour and day and a bar each, from
    /// the rows in `rows` (``RefusalBreakdown``): the overview's refusals, and its would-be refusals.
    static func reasonTable(id: String, caption: String, rows: String) -> String {
        """
        <table id="\(id)">
        <caption>\(caption)</caption>
        <thead><tr><th scope="col">Reason</th><th scope="col">Last hour</th><th scope="col">Last day</th><th scope="col"><span class="visually-hidden">Share</span></th></tr></thead>
        <tbody>
        {{#\(rows)}}
        <tr><td><a href="/signet/admin/refusals?reason={{reason}}"><code>{{reason}}</code></a></td><td>{{lastHour}}</td><td>{{lastDay}}</td>
        <td><svg width="200" height="12" aria-hidden="true"><rect class="refused" width="{{barWidth}}" height="12"/></svg></td></tr>
        {{/\(rows)}}
        </tbody>
        </table>
        """
    }

    static let chart = """
        <figure>
        <svg role="img" aria-labelledby="{{id}}-title" viewBox="0 0 {{width}} {{height}}" class="chart">
        <title id="{{id}}-title">{{summary}}</title>
        {{#yTicks}}<line class="grid" x1="{{left}}" x2="{{plotRight}}" y1="{{y}}" y2="{{y}}"/><text class="tick" x="{{labelX}}" y="{{labelY}}" text-anchor="end">{{label}}</text>
        {{/yTicks}}<path class="accepted" d="{{acceptedPath}}"/>
        <path class="refused" d="{{refusedPath}}"/>
        <line class="axis" x1="{{left}}" x2="{{plotRight}}" y1="{{baseY}}" y2="{{baseY}}"/>
        {{#xTicks}}<line class="axis" x1="{{x}}" x2="{{x}}" y1="{{baseY}}" y2="{{markY}}"/><text class="tick" x="{{x}}" y="{{textY}}" text-anchor="middle">{{label}}</text>
        {{/xTicks}}<text class="unit" transform="translate(12 {{midY}}) rotate(-90)" text-anchor="middle">{{unit}}</text>
        </svg>
        <figcaption id="{{id}}-caption"><span class="key accepted-key">{{accepted}} accepted</span>, <span class="key refused-key">{{refused}} refused</span> over the {{title}}, in {{unit}} (time in UTC); the busiest bar had {{peak}}.</figcaption>
        </figure>
        """

    static let overview = """
        {{<layout}}{{$content}}
        <section aria-labelledby="hour">
        <h2 id="hour">Requests per minute, last hour</h2>
        {{#hour}}\(chart){{/hour}}
        </section>
        <section aria-labelledby="day">
        <h2 id="day">Requests per quarter hour, last day</h2>
        {{#day}}\(chart){{/day}}
        </section>
        <section aria-labelledby="reasons">
        <h2 id="reasons">Refusals by reason</h2>
        {{^hasReasons}}<p>No refusals in the last day.</p>{{/hasReasons}}
        {{#hasReasons}}
        \(reasonTable(id: "reason-table", caption: "Refused requests by reason code", rows: "reasons"))
        {{/hasReasons}}
        </section>
        {{#hasMonitored}}
        <section aria-labelledby="monitored">
        <h2 id="monitored">Would be refused on monitor routes</h2>
        \(reasonTable(
            id: "monitored-table", caption: "Requests monitor routes forwarded that enforcing would refuse, by reason code", rows: "monitored"))
        </section>
        {{/hasMonitored}}
        {{/content}}{{/layout}}
        """

    static let users = """
        {{<layout}}{{$content}}
        {{^hasUsers}}<p>No users{{#after}} after “{{after}}”{{/after}}. Users log in with a password where the gateway has <code>passwords</code>; <code>PUT /signet/v1/users/{name}</code> or <code>signet passwd</code> adds them.</p>{{/hasUsers}}
        {{#hasUsers}}
        <table id="user-table">
        <caption>Users, by name</caption>
        <thead><tr><th scope="col">User</th><th scope="col">Realm</th><th scope="col">Logs in with</th><th scope="col">Created</th><th scope="col">Password set</th><th scope="col">Devices</th></tr></thead>
        <tbody>
        {{#users}}
        <tr><td>{{name}}</td><td>{{realm}}</td><td>{{schemes}}</td><td>{{created}}</td><td>{{updated}}</td><td><a href="/signet/admin/devices?q={{linkName}}">Devices of {{name}}</a></td></tr>
        {{/users}}
        </tbody>
        </table>
        {{/hasUsers}}
        {{#next}}<p><a rel="next" href="/signet/admin/users?{{next}}">More users</a></p>{{/next}}
        {{/content}}{{/layout}}
        """

    static let devices = """
        {{<layout}}{{$content}}
        <form method="get" action="/signet/admin/devices" role="search">
        <label for="q">Device id, key id or user</label>
        <input id="q" name="q" type="search" value="{{query}}">
        <button type="submit">Search</button>
        </form>
        {{^hasDevices}}<p>No devices{{#query}} match “{{query}}”{{/query}}.</p>{{/hasDevices}}
        {{#hasDevices}}
        <table id="device-table">
        <caption>Devices, newest first</caption>
        <thead><tr><th scope="col">Device</th><th scope="col">User</th><th scope="col">Trust level</th><th scope="col">Algorithm</th><th scope="col">Status</th><th scope="col">Registered</th><th scope="col">Last seen</th><th scope="col">Counter</th><th scope="col">Risk metric</th></tr></thead>
        <tbody>
        {{#devices}}
        <tr><td><a href="/signet/admin/devices/{{linkID}}">{{deviceID}}</a></td><td>{{user}}</td><td>{{trustLevel}}</td><td>{{algorithm}}</td><td class="status-{{status}}">{{status}}</td><td>{{registered}}</td><td>{{lastSeen}}</td><td>{{counter}}</td><td>{{riskMetric}}</td></tr>
        {{/devices}}
        </tbody>
        </table>
        {{/hasDevices}}
        {{#next}}<p><a rel="next" href="/signet/admin/devices?{{next}}">Older devices</a></p>{{/next}}
        {{#debugDevices}}
        <form method="post" action="/signet/admin/devices/debug" id="debug-device">
        <h2>Register a debug device</h2>
        <p>A simulator's or a CI runner's key, as its app prints it (<code>DebugDeviceProvider</code>): its requests count as trust level <code>debug</code>, which <code>app-attest</code> and <code>android-key-attestation</code> routes refuse.</p>
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="debug-name">Name</label>
        <input id="debug-name" name="name" type="text" maxlength="80" required>
        <label for="debug-key">Public key (JWK or PEM)</label>
        <textarea id="debug-key" name="publicKey" rows="4" required></textarea>
        <button type="submit">Register debug device</button>
        </form>
        {{/debugDevices}}
        {{/content}}{{/layout}}
        """

    static let device = """
        {{<layout}}{{$content}}
        {{#device}}
        <dl>
        <dt>Device id</dt><dd id="device-id">{{deviceID}}</dd>
        <dt>Key id</dt><dd>{{keyID}}</dd>
        <dt>User</dt><dd>{{user}}</dd>
        <dt>Trust level</dt><dd>{{trustLevel}}</dd>
        <dt>Algorithm</dt><dd>{{algorithm}}</dd>
        <dt>Status</dt><dd id="device-status" class="status-{{status}}">{{status}}</dd>
        <dt>Registered</dt><dd>{{registered}}</dd>
        <dt>Revoked</dt><dd>{{revoked}}</dd>
        <dt>Last seen</dt><dd>{{lastSeen}}</dd>
        <dt>Counter</dt><dd>{{counter}}</dd>
        <dt>Risk metric</dt><dd>{{riskMetric}}</dd>
        {{#receipt}}
        <dt>Receipt</dt><dd>{{kind}}, created {{created}}, expires {{expires}}, next refresh {{refresh}}{{#failures}}, {{failures}} failed refreshes{{/failures}}</dd>
        {{/receipt}}
        {{#attributes}}<dt>{{name}}</dt><dd>{{value}}</dd>{{/attributes}}
        </dl>
        {{#active}}
        <form method="post" action="/signet/admin/devices/{{linkID}}/revoke" class="danger">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><input id="confirm" name="confirm" type="checkbox" value="yes" required>
        <label for="confirm">Revoke {{deviceID}}: its requests are refused from now on, and this cannot be undone.</label></p>
        <button type="submit" id="revoke">Revoke device</button>
        </form>
        {{/active}}
        {{/device}}
        {{/content}}{{/layout}}
        """

    static let refusals = """
        {{<layout}}{{$content}}
        <form method="get" action="/signet/admin/refusals">
        <label for="reason">Reason code</label>
        <input id="reason" name="reason" value="{{reason}}">
        <button type="submit">Filter</button>
        </form>
        {{^hasRefusals}}<p>No refusals kept{{#reason}} with reason {{reason}}{{/reason}}.</p>{{/hasRefusals}}
        {{#hasGroups}}
        <section aria-labelledby="grouped">
        <h2 id="grouped">What is refused</h2>
        <table id="refusal-groups">
        <caption>The latest {{grouped}} refusals grouped by reason and request, most frequent first, with the next step</caption>
        <thead><tr><th scope="col">Refusals</th><th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Request</th><th scope="col">Sources</th><th scope="col">Instances</th><th scope="col">Last</th><th scope="col">Next step</th></tr></thead>
        <tbody>
        {{#groups}}
        <tr><td>{{count}}</td><td><a href="/signet/admin/refusals?reason={{reason}}"><code>{{reason}}</code></a></td><td>{{status}}{{#monitored}} (monitor: forwarded){{/monitored}}</td><td><code>{{method}} {{path}}</code></td><td>{{sources}}</td><td>{{instances}}</td><td>{{last}}</td><td>{{advice}}</td></tr>
        {{/groups}}
        </tbody>
        </table>
        </section>
        <h2 id="rows">Each refusal</h2>
        {{/hasGroups}}
        {{#hasRefusals}}
        <table id="refusal-table">
        <caption>Latest refusals, newest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Reason</th><th scope="col">Status</th><th scope="col">Request</th><th scope="col">Key id</th><th scope="col">Source</th><th scope="col">Instance</th></tr></thead>
        <tbody>
        {{#refusals}}
        <tr><td>{{time}}</td><td><code>{{reason}}</code></td><td>{{status}}{{#monitored}} (monitor: forwarded){{/monitored}}</td><td><code>{{method}} {{path}}</code></td><td>{{keyID}}</td><td>{{source}}</td><td>{{instance}}</td></tr>
        {{/refusals}}
        </tbody>
        </table>
        {{/hasRefusals}}
        {{#next}}<p><a rel="next" href="/signet/admin/refusals?{{next}}">Older refusals</a></p>{{/next}}
        {{/content}}{{/layout}}
        """

    static let pinReports = """
        {{<layout}}{{$content}}
        <p>Identical reports (same host, reason and served certificates) are counted in one group. {{groups}} groups are kept, at most {{groupLimit}} (<code>maxPinReportGroups</code>); groups unreported for 30 days go.</p>
        {{#full}}<p class="error" role="alert">The store of pin reports is full: each new kind of report drops the group reported least recently.</p>{{/full}}
        <section aria-labelledby="hosts">
        <h2 id="hosts">Reports by host</h2>
        {{^hasHosts}}<p>No pin reports in the last 30 days.</p>{{/hasHosts}}
        {{#hasHosts}}
        <table id="host-table"><caption>Kept pin reports by host</caption>
        <thead><tr><th scope="col">Host</th><th scope="col">Reports</th></tr></thead>
        <tbody>{{#hosts}}<tr><td>{{hostname}}</td><td>{{count}}</td></tr>{{/hosts}}</tbody>
        </table>
        {{/hasHosts}}
        </section>
        <section aria-labelledby="latest">
        <h2 id="latest">Latest reports</h2>
        {{#hasReports}}
        <table id="report-table"><caption>Groups of reports, most recently reported first</caption>
        <thead><tr><th scope="col">Last reported</th><th scope="col">Host</th><th scope="col">Reason</th><th scope="col">Reports</th><th scope="col">Latest source</th></tr></thead>
        <tbody>{{#reports}}<tr><td><a href="/signet/admin/pin-reports/{{linkID}}">{{lastSeen}}</a></td><td>{{hostname}}</td><td>{{reason}}</td><td>{{count}}</td><td>{{source}}</td></tr>{{/reports}}</tbody>
        </table>
        {{/hasReports}}
        </section>
        {{/content}}{{/layout}}
        """

    static let pinReport = """
        {{<layout}}{{$content}}
        {{#report}}
        <dl>
        <dt>Host</dt><dd>{{hostname}}</dd>
        <dt>Reason</dt><dd>{{reason}}</dd>
        <dt>Reports</dt><dd>{{count}}</dd>
        <dt>First reported</dt><dd>{{firstSeen}}</dd>
        <dt>Last reported</dt><dd>{{lastSeen}}</dd>
        <dt>Latest source</dt><dd>{{source}}</dd>
        <dt>Served pins</dt><dd><ol>{{#servedPins}}<li><code>{{.}}</code></li>{{/servedPins}}</ol></dd>
        <dt>Served chain</dt><dd><ol>{{#servedChain}}<li><pre>{{.}}</pre></li>{{/servedChain}}</ol></dd>
        <dt>Expected pins</dt><dd><ul>{{#expectedPins}}<li><code>{{.}}</code></li>{{/expectedPins}}</ul></dd>
        </dl>
        <h2>The first report, as received</h2>
        <pre>{{json}}</pre>
        {{/report}}
        {{/content}}{{/layout}}
        """

    static let keys = """
        {{<layout}}{{$content}}
        {{#warnings}}<p class="error" role="alert">{{.}}</p>{{/warnings}}
        <table id="key-table">
        <caption>Keys and certificates the gateway holds (never their secrets)</caption>
        <thead><tr><th scope="col">Role</th><th scope="col">Name</th><th scope="col">Algorithm</th><th scope="col">Valid from</th><th scope="col">Valid until</th><th scope="col">Status</th></tr></thead>
        <tbody>
        {{#keys}}<tr><td>{{role}}</td><td>{{name}}</td><td>{{algorithm}}</td><td>{{notBefore}}</td><td>{{notAfter}}</td><td class="status-{{statusClass}}">{{status}}</td></tr>{{/keys}}
        </tbody>
        </table>
        {{/content}}{{/layout}}
        """

    static let audit = """
        {{<layout}}{{$content}}
        <table id="audit-table">
        <caption>Changes made in the console, newest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Target</th><th scope="col">From</th></tr></thead>
        <tbody>{{#entries}}<tr><td>{{time}}</td><td>{{actor}}</td><td><code>{{action}}</code></td><td>{{target}}</td><td>{{source}}</td></tr>{{/entries}}</tbody>
        </table>
        {{#next}}<p><a rel="next" href="/signet/admin/audit?{{next}}">Older entries</a></p>{{/next}}
        {{/content}}{{/layout}}
        """

    static let problem = """
        {{<layout}}{{$content}}
        <p class="error" role="alert">{{detail}}</p>
        <p>Reason code: <code id="reason-code">{{reason}}</code></p>
        <p><a href="/signet/admin/">Back to the console</a></p>
        {{/content}}{{/layout}}
        """

    /// Dark text on light ground (WCAG AA contrast or better), visible focus, no web fonts.
    /// The tab icon. Without one a browser asks for `/favicon.ico`, which the gateway would guard
    /// as an upstream path and count as a refusal every time an operator opens a page.
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1d4ed8"/>\
        <path d="M4 8.5l2.5 2.5L12 5.5" fill="none" stroke="#fff" stroke-width="2"/></svg>
        """

    static let stylesheet = """
        :root { color-scheme: light; --ink: #1a1a1a; --muted: #4a4a4a; --line: #c8c8c8; --accent: #0b57d0; --ok: #1b6e3a; --bad: #a50e0e; }
        body { font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: #fff; margin: 0; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
        .brand { font-weight: 700; margin: 0; }
        nav ul { display: flex; flex-wrap: wrap; gap: .75rem; list-style: none; margin: 0; padding: 0; }
        a { color: var(--accent); }
        a[aria-current=page] { font-weight: 700; color: var(--ink); }
        :focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        main { padding: 1rem; max-width: 80rem; }
        .sign-out { margin-left: auto; }
        .skip { position: absolute; left: -999px; }
        .skip:focus { left: 1rem; top: .5rem; background: #fff; padding: .25rem; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        table { border-collapse: collapse; margin: 1rem 0; }
        caption { text-align: left; font-weight: 600; padding-bottom: .25rem; }
        th, td { border-bottom: 1px solid var(--line); padding: .25rem .75rem .25rem 0; text-align: left; vertical-align: top; }
        figure { margin: 0 0 1.5rem; }
        .chart { width: 100%; height: auto; max-height: 260px; }
        #refusal-groups td:nth-child(4) code { word-break: break-all; }
        #refusal-groups td:last-child { min-width: 20em; }
        #refusal-table td:nth-child(4) code, #refusal-table td:nth-child(5) { word-break: break-all; }
        .chart .grid { stroke: var(--line); stroke-width: 1; }
        .chart .axis { stroke: var(--muted); stroke-width: 1; }
        .chart .tick, .chart .unit { fill: var(--muted); font-size: 11px; }
        path.accepted, rect.accepted { fill: var(--ok); }
        path.refused, rect.refused { fill: var(--bad); }
        .accepted-key { color: var(--ok); font-weight: 600; }
        .refused-key, .status-revoked, .status-expired, .error { color: var(--bad); font-weight: 600; }
        .status-expires-soon { color: #8a4b00; font-weight: 600; }
        .notice { color: var(--ok); font-weight: 600; }
        .danger { border: 2px solid var(--bad); padding: .5rem 1rem; max-width: 40rem; }
        label { display: inline-block; margin-right: .5rem; }
        input, button { font: inherit; padding: .25rem .5rem; }
        pre { white-space: pre-wrap; word-break: break-all; max-width: 70rem; }
        """
}
