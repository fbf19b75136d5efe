// SPDX-License-Identifier: Apache-2.0
import GRPCCore

/// `grpc.health.v1.Health/Check` on the gRPC listener, for Envoy's gRPC health checks of the
/// `ext_authz` cluster (`grpc_health_check`): `SERVING` while the store answers, `NOT_SERVING`
/// when it does not (checks would be refused `store_unavailable`), as `/readyz` says on the HTTP
/// listener. The service asked about is `""` (the server) or the authorization service; any other
/// is `NOT_FOUND`, as the health protocol says.
struct AuthorizationHealthService: Grpc_Health_V1_Health.SimpleServiceProtocol {
    let storeAnswers: @Sendable () async -> Bool

    static let services: Set<String> = ["", "envoy.service.auth.v3.Authorization"]

    func check(request: Grpc_Health_V1_HealthCheckRequest, context: ServerContext) async throws -> Grpc_Health_V1_HealthCheckResponse {
        guard Self.services.contains(request.service) else {
            throw RPCError(code: .notFound, message: "no service \(request.service) here")
        }
        var response = Grpc_Health_V1_HealthCheckResponse()
        response.status = await storeAnswers() ? .serving : .notServing
        return response
    }
}
