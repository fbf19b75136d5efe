// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import SignetCore
import SignetMiddleware
import SignetStore

// Devices and nonces in memory; an app with a database adopts SignetStore's protocols for it.
let store = MemoryStore()
let verifier = SignetRequestVerifier(
    verifier: MessageVerifier(keys: StoreKeyResolver(devices: store), nonces: store),
    publicScheme: "https",
    publicAuthority: ProcessInfo.processInfo.environment["PUBLIC_AUTHORITY"] ?? "api.example.com"
)

let router = Router(context: SignetRequestContext.self)
router.add(middleware: ProblemMiddleware())
router.get("/healthz") { _, _ in "ok" }
// Challenges, device registration and revocation, into the same store the middleware reads.
SignetRegistrationRoutes<SignetRequestContext>(
    store: store,
    configuration: RegistrationConfiguration(adminToken: ProcessInfo.processInfo.environment["ADMIN_TOKEN"])
).add(to: router)
router.group("api")
    .add(middleware: SignetVerificationMiddleware(verifier: verifier, requirement: .trustLevel(.deviceKey)))
    .post("scores") { _, context in "hello \(context.signetIdentity?.deviceID ?? "-")" }

let port = Int(ProcessInfo.processInfo.environment["PORT"] ?? "8080") ?? 8080
let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
