// SPDX-License-Identifier: Apache-2.0

/// The catalogue: every reason code Signet raises, once, with the HTTP status a server answers it
/// with. Server, store, App Attest and client modules raise codes from here; none mints its own.
extension SignetError.Code {
    // Message and header syntax.
    public static let malformedHeader = Self("malformed_header", 400)
    public static let malformedMessage = Self("malformed_message", 400)
    public static let malformedCBOR = Self("malformed_cbor", 400)
    public static let headerTooLarge = Self("header_too_large", 431)
    public static let bodyTooLarge = Self("body_too_large", 413)
    /// A body for one of Signet's JSON endpoints that is not declared `application/json`.
    public static let unsupportedMediaType = Self("unsupported_media_type", 415)
    /// A request path that servers read in different ways (encoded `/`, `..;`, `//`, NUL, …).
    public static let pathAmbiguous = Self("path_ambiguous", 400)
    /// The HTTP parser refused the request (conflicting `Content-Length`/`Transfer-Encoding`, bad
    /// syntax): a request smuggling attempt or a broken client.
    public static let requestInvalid = Self("request_invalid", 400)
    // Signature selection.
    public static let signatureMissing = Self("signature_missing", 401)
    public static let ambiguousSignature = Self("ambiguous_signature", 401)
    public static let tagMismatch = Self("tag_mismatch", 401)
    // Covered components and parameters.
    public static let componentMissing = Self("component_missing", 401)
    public static let componentNotCovered = Self("component_not_covered", 401)
    public static let componentUnsupported = Self("component_unsupported", 400)
    public static let parameterMissing = Self("parameter_missing", 401)
    // Time window.
    public static let createdTooOld = Self("created_too_old", 401)
    public static let createdInFuture = Self("created_in_future", 401)
    public static let expired = Self("expired", 401)
    // Keys and algorithms.
    public static let unknownKey = Self("unknown_key", 401)
    public static let keyRevoked = Self("key_revoked", 401)
    public static let keyNotYetValid = Self("key_not_yet_valid", 401)
    public static let keyExpired = Self("key_expired", 401)
    public static let invalidKey = Self("invalid_key", 400)
    public static let algMismatch = Self("alg_mismatch", 401)
    public static let algUnsupported = Self("alg_unsupported", 401)
    /// A key does not belong to the certificate, CSR or request it came with.
    public static let keyMismatch = Self("key_mismatch", 400)
    // Content-Digest.
    public static let digestMissing = Self("digest_missing", 401)
    public static let digestNotCovered = Self("digest_not_covered", 401)
    public static let digestMismatch = Self("digest_mismatch", 401)
    public static let digestAlgorithmUnsupported = Self("digest_algorithm_unsupported", 401)
    // The cryptographic check and replay.
    public static let signatureInvalid = Self("signature_invalid", 401)
    public static let nonceMissing = Self("nonce_missing", 401)
    public static let nonceReplayed = Self("nonce_replayed", 401)
    public static let nonceStoreFull = Self("nonce_store_full", 503)
    public static let counterNotIncreasing = Self("counter_not_increasing", 401)
    // Authorisation: who may use which route.
    /// The route requires a higher trust level than the client's key has.
    public static let trustLevelInsufficient = Self("trust_level_insufficient", 403)
    /// An admin endpoint without the admin bearer token, or with a wrong one.
    public static let adminUnauthorized = Self("admin_unauthorized", 401)
    /// A change in the operator console without its session's form token, or from another origin.
    public static let csrfInvalid = Self("csrf_invalid", 403)
    /// A `client-certificate` route reached without a client certificate.
    public static let clientCertificateRequired = Self("client_certificate_required", 401)
    /// The client certificate is not from the device CA, or not the device's current one.
    public static let clientCertificateUntrusted = Self("client_certificate_untrusted", 401)
    // Registration and App Attest.
    public static let challengeUnknown = Self("challenge_unknown", 401)
    public static let challengeExpired = Self("challenge_expired", 401)
    public static let attestationChainInvalid = Self("attestation_chain_invalid", 401)
    public static let attestationNonceMismatch = Self("attestation_nonce_mismatch", 401)
    /// The attested key is not the key id the client named.
    public static let attestationKeyMismatch = Self("attestation_key_mismatch", 401)
    public static let appIDMismatch = Self("app_id_mismatch", 401)
    /// Android Key Attestation: a certificate of the chain is outside its validity at the time of
    /// checking.
    public static let attestationExpired = Self("attestation_expired", 401)
    /// The chain does not end in a trusted attestation root (Google's, unless configured).
    public static let attestationRootUnknown = Self("attestation_root_unknown", 401)
    /// A certificate of the chain is revoked or suspended in Google's attestation status list.
    public static let attestationRevoked = Self("attestation_revoked", 401)
    /// The key is attested below the security level asked for (software, or the TEE where
    /// StrongBox is required).
    public static let attestationSecurityLevel = Self("attestation_security_level", 401)
    /// The device's bootloader is unlocked or its boot chain is not verified.
    public static let attestationBootState = Self("attestation_boot_state", 401)
    /// The device's security patch level is older than allowed.
    public static let attestationPatchLevel = Self("attestation_patch_level", 401)
    /// The attestation's batch certificate attested more devices in the window than allowed: the
    /// sign of a leaked keybox.
    public static let attestationBatchExceeded = Self("attestation_batch_exceeded", 403)
    /// Google's revocation list is older than allowed and could not be fetched again: attestations
    /// wait until it can.
    public static let attestationStatusUnavailable = Self("attestation_status_unavailable", 503)
    /// A Play Integrity verdict below the policy: the app not recognised by Google Play, the device
    /// below the integrity asked for, or no licence.
    public static let integrityVerdictInsufficient = Self("integrity_verdict_insufficient", 403)
    // Play Integrity's opt-in environment signals (2026), each refused with its own code: outside
    // the policy, or not in the verdict where the policy asks about it.
    /// Play Protect reports a risk above the policy's (or did not evaluate the device).
    public static let playProtectRisk = Self("play_protect_risk", 403)
    /// Apps that may read or control this one run on the device (or access risk was not evaluated).
    public static let appAccessRisk = Self("app_access_risk", 403)
    /// The device asked for integrity tokens more often lately than the policy takes, as a farm
    /// does (or its activity was not evaluated).
    public static let deviceActivityExcessive = Self("device_activity_excessive", 403)
    /// The device runs an Android SDK older than the policy's (or its SDK version is not reported).
    public static let deviceSDKOutdated = Self("device_sdk_outdated", 403)
    /// The app's backend marked this device through device recall (or recall was not reported).
    public static let deviceRecalled = Self("device_recalled", 403)
    public static let environmentMismatch = Self("environment_mismatch", 401)
    public static let deviceExists = Self("device_exists", 409)
    /// The server refused a registration with a code this client does not know.
    public static let registrationFailed = Self("registration_failed", 400)
    // App Attest receipts and the risk metric.
    public static let receiptInvalid = Self("receipt_invalid", 401)
    public static let receiptChainInvalid = Self("receipt_chain_invalid", 401)
    public static let receiptExpired = Self("receipt_expired", 401)
    public static let receiptNotYetValid = Self("receipt_not_yet_valid", 401)
    public static let receiptStale = Self("receipt_stale", 401)
    public static let riskMetricExceeded = Self("risk_metric_exceeded", 403)
    // App Attest's app build (iOS 27): how the binary was signed and its bundle version.
    /// The device's app is signed in a validation category the route does not accept.
    public static let appCategoryRefused = Self("app_category_refused", 403)
    /// The app's bundle version is below the route's minimum, or not numbers to compare.
    public static let appVersionRefused = Self("app_version_refused", 403)
    /// The device wrote no validation category or bundle version (iOS 26 and older), and the route
    /// requires them.
    public static let appBuildUndeclared = Self("app_build_undeclared", 403)
    // Keys delivered in the request (draft-hardt-httpbis-signature-key-08).
    /// `Signature-Key` does not parse, or its member lacks what its scheme requires.
    public static let signatureKeyInvalid = Self("signature_key_invalid", 401)
    /// The route does not take keys of the member's scheme (or any delivered key).
    public static let signatureKeyUnsupported = Self("signature_key_unsupported", 401)
    // Known agents (Web Bot Auth).
    /// `Signature-Agent` names a directory no configured agent publishes, or an agent the route does
    /// not take.
    public static let agentUnknown = Self("agent_unknown", 401)
    /// A known agent's key directory cannot be fetched and no copy is cached.
    public static let agentDirectoryUnavailable = Self("agent_directory_unavailable", 503)
    // App tokens (the gateway's JWTs) and Firebase App Check tokens.
    public static let tokenMissing = Self("token_missing", 401)
    public static let tokenInvalid = Self("token_invalid", 401)
    public static let tokenExpired = Self("token_expired", 401)
    public static let tokenAudienceMismatch = Self("token_audience_mismatch", 401)
    public static let tokenReplayed = Self("token_replayed", 401)
    // DPoP (RFC 9449): proofs of possession of the key a token is bound to.
    /// The route binds its tokens to a key, and the request carries no `DPoP` proof.
    public static let dpopProofMissing = Self("dpop_proof_missing", 401)
    /// The proof does not parse, is not signed by its own key, or names another method, URI or token.
    public static let dpopProofInvalid = Self("dpop_proof_invalid", 401)
    /// The proof's `iat` is outside the window around the server's clock.
    public static let dpopProofStale = Self("dpop_proof_stale", 401)
    /// The proof's `jti` was seen before: a replayed proof.
    public static let dpopProofReplayed = Self("dpop_proof_replayed", 401)
    /// The route asks for a server nonce in proofs, and this one has none or an old one; the answer
    /// carries a fresh `DPoP-Nonce`.
    public static let dpopNonceRequired = Self("dpop_nonce_required", 401)
    /// The proof is signed by a key other than the one the token is bound to (`cnf.jkt`).
    public static let dpopKeyMismatch = Self("dpop_key_mismatch", 401)
    // OAuth 2.0 Attestation-Based Client Authentication (draft-ietf-oauth-attestation-based-client-auth-11).
    /// The route asks for a client attestation, and the request lacks `OAuth-Client-Attestation`
    /// or `OAuth-Client-Attestation-PoP`.
    public static let clientAttestationMissing = Self("client_attestation_missing", 401)
    /// The Client Attestation is not one this gateway issued (type, signature, issuer, client id,
    /// key) or its device is no longer registered: OAuth's `invalid_client_attestation`.
    public static let clientAttestationInvalid = Self("client_attestation_invalid", 401)
    /// The Client Attestation has expired: OAuth's `use_fresh_attestation`.
    public static let clientAttestationExpired = Self("client_attestation_expired", 401)
    /// The PoP does not parse, is not signed by the attested key, or names another audience.
    public static let clientAttestationPoPInvalid = Self("client_attestation_pop_invalid", 401)
    /// The PoP's `iat` is outside the window around the server's clock.
    public static let clientAttestationPoPStale = Self("client_attestation_pop_stale", 401)
    /// The PoP's `jti` was seen before: a replayed request.
    public static let clientAttestationPoPReplayed = Self("client_attestation_pop_replayed", 401)
    /// The route asks for a server challenge in the PoP, and this one has none or an old one:
    /// OAuth's `use_attestation_challenge`; the answer carries `OAuth-Client-Attestation-Challenge`.
    public static let clientAttestationChallengeRequired = Self("client_attestation_challenge_required", 401)
    /// The keys Firebase App Check tokens are checked with cannot be fetched now.
    public static let tokenKeysUnavailable = Self("token_keys_unavailable", 503)
    // Oblivious HTTP (RFC 9458).
    /// No key configuration has the request's key id, KEM and suite: the client should fetch the
    /// gateway's keys again. 400 with RFC 9458 §5.3's `ohttp-key` problem type, as that section's
    /// example and other gateways answer, and clients test for.
    public static let ohttpKeyUnknown = Self("ohttp_key_unknown", 400)
    /// An encapsulated request or response that is truncated, tampered with or does not decrypt.
    public static let decapsulationFailed = Self("decapsulation_failed", 400)
    /// The same encapsulated request again (RFC 9458 §6.5): its encapsulated key was seen already.
    public static let encapsulationReplayed = Self("encapsulation_replayed", 400)
    /// A legacy envelope (JSON `{mac, iv, payload}` or RNCryptor v3) that does not open: one code for
    /// a bad MAC, bad padding or an unknown version, so none of them can be told apart.
    public static let envelopeInvalid = Self("envelope_invalid", 400)
    // Signed trust documents (pin sets and keys that update without an app release).
    /// A trust document that does not verify: malformed, altered, signed by a key not trusted, or
    /// with an algorithm other than ES256 and EdDSA (`none` and HMAC included).
    public static let trustDocumentInvalid = Self("trust_document_invalid", 400)
    /// A trust document past its `exp`.
    public static let trustDocumentExpired = Self("trust_document_expired", 400)
    /// A trust document whose `version` is not above the one already held (a rollback).
    public static let trustVersionRollback = Self("trust_version_rollback", 409)
    // Password login (RFC 7617 Basic, RFC 7616 Digest).
    /// A password route reached without credentials; the answer carries the challenges.
    public static let credentialsMissing = Self("credentials_missing", 401)
    /// A wrong password or an unknown user: one code for both, so neither can be told apart.
    public static let credentialsInvalid = Self("credentials_invalid", 401)
    /// A Digest nonce this server did not issue (or altered, or for another realm).
    public static let digestNonceInvalid = Self("digest_nonce_invalid", 401)
    /// The Digest response was right but its nonce expired: the challenge says `stale=true`, so
    /// the client retries with the new nonce without asking the user.
    public static let digestNonceStale = Self("digest_nonce_stale", 401)
    /// The Digest `uri` is not the request's target.
    public static let digestURIMismatch = Self("digest_uri_mismatch", 400)
    /// A Digest `qop` the route does not accept (`auth` where the body must be covered).
    public static let digestQopUnsupported = Self("digest_qop_unsupported", 401)
    /// Too many failed logins for this user or from this source; `Retry-After` says when to try.
    public static let loginLocked = Self("login_locked", 429)
    /// Basic credentials over plain HTTP, where the password would travel in clear.
    public static let insecureTransport = Self("insecure_transport", 403)
    // Limits, the store and the upstream.
    public static let rateLimited = Self("rate_limited", 429)
    /// This client has as many requests in progress as `maxConnectionsPerClient` allows.
    public static let connectionLimit = Self("connection_limit", 429)
    /// The request's body did not arrive within `requestTimeoutSeconds` of its head; the connection
    /// is closed (nginx's 408).
    public static let requestTooSlow = Self("request_too_slow", 408)
    /// The client closed the connection before its request was complete (nginx's 499): the
    /// client's doing, never the server's error.
    public static let clientClosedRequest = Self("client_closed_request", 499)
    public static let notFound = Self("not_found", 404)
    public static let methodNotAllowed = Self("method_not_allowed", 405)
    public static let storeUnavailable = Self("store_unavailable", 503)
    /// The upstream failed after the gateway reached it: it closed or reset the connection, did not
    /// answer in time, or its answer broke off.
    public static let upstreamUnavailable = Self("upstream_unavailable", 503)
    /// No connection to the upstream could be made (refused, no route, name unknown): answered at
    /// once, as nginx's 502, rather than after the upstream timeout.
    public static let upstreamUnreachable = Self("upstream_unreachable", 502)
    // External authorization (forward auth and Envoy's ext_authz), where another proxy forwards.
    /// The request carries a body (announced by its length, transfer coding or `Content-Digest`)
    /// that the proxy's authorization request did not bring, whole, and the route checks bodies:
    /// a digest is never taken on trust. 403, the status nginx's `auth_request` passes on.
    public static let bodyNotForwarded = Self("body_not_forwarded", 403)
    /// An authorization request that does not say which request it is about (no original URI, a
    /// field given twice, a target that is not a path).
    public static let authorizationRequestInvalid = Self("authorization_request_invalid", 400)
    /// The route's access mode can only be enforced by Signet's own proxy (its gate reads the
    /// client's TLS certificate, or changes the request it admits).
    public static let authorizationUnsupported = Self("authorization_unsupported", 501)
    /// Anything unexpected; the answer says nothing more.
    public static let internalError = Self("internal_error", 500)
    // Pinning and the client transport (raised in the client; the statuses are what a proxy in the
    // same position would answer).
    public static let pinMismatch = Self("pin_mismatch", 502)
    /// The URL (or a redirect) leads outside the configured origins; nothing was sent there.
    public static let originNotAllowed = Self("origin_not_allowed", 400)
    /// The server's certificate is not valid at this time.
    public static let certificateExpired = Self("certificate_expired", 502)
    /// The server's certificate does not name the host connected to.
    public static let hostnameMismatch = Self("hostname_mismatch", 502)
    /// The server's chain does not lead to a trusted root (or cannot be parsed).
    public static let certificateUntrusted = Self("certificate_untrusted", 502)
    /// The connection failed or closed before an answer came.
    public static let connectionFailed = Self("connection_failed", 502)
    /// No answer within the configured timeout; the connection was closed.
    public static let requestTimeout = Self("request_timeout", 504)
    /// A response that had to be signed was not, or its signature did not verify.
    public static let responseSignatureInvalid = Self("response_signature_invalid", 502)
    /// The client's transport cannot carry its requests as configured (a background `URLSession`
    /// configuration, which sends them after their signatures' window); nothing was sent.
    public static let transportUnsupported = Self("transport_unsupported", 500)

    /// Every code above, by name.
    public static let all: [Self] = [
        .malformedHeader, .malformedMessage, .malformedCBOR, .headerTooLarge, .bodyTooLarge, .unsupportedMediaType, .pathAmbiguous,
        .requestInvalid, .signatureMissing, .ambiguousSignature, .tagMismatch, .componentMissing,
        .componentNotCovered, .componentUnsupported, .parameterMissing, .createdTooOld, .createdInFuture, .expired,
        .unknownKey, .keyRevoked, .keyNotYetValid, .keyExpired, .invalidKey, .algMismatch, .algUnsupported,
        .keyMismatch, .digestMissing, .digestNotCovered, .digestMismatch, .digestAlgorithmUnsupported,
        .signatureInvalid, .nonceMissing, .nonceReplayed, .nonceStoreFull, .counterNotIncreasing,
        .trustLevelInsufficient, .adminUnauthorized, .csrfInvalid, .clientCertificateRequired, .clientCertificateUntrusted,
        .ohttpKeyUnknown, .decapsulationFailed, .encapsulationReplayed, .envelopeInvalid,
        .trustDocumentInvalid, .trustDocumentExpired, .trustVersionRollback, .credentialsMissing,
        .credentialsInvalid, .digestNonceInvalid, .digestNonceStale, .digestURIMismatch, .digestQopUnsupported,
        .loginLocked, .insecureTransport, .challengeUnknown, .challengeExpired, .attestationChainInvalid, .attestationNonceMismatch,
        .attestationKeyMismatch, .appIDMismatch, .attestationExpired, .attestationRootUnknown, .attestationRevoked,
        .attestationSecurityLevel, .attestationBootState, .attestationPatchLevel, .attestationBatchExceeded,
        .attestationStatusUnavailable, .integrityVerdictInsufficient,
        .playProtectRisk, .appAccessRisk, .deviceActivityExcessive, .deviceSDKOutdated, .deviceRecalled,
        .environmentMismatch, .deviceExists, .registrationFailed,
        .receiptInvalid, .receiptChainInvalid, .receiptExpired, .receiptNotYetValid, .receiptStale,
        .riskMetricExceeded, .appCategoryRefused, .appVersionRefused, .appBuildUndeclared, .signatureKeyInvalid, .signatureKeyUnsupported, .agentUnknown, .agentDirectoryUnavailable, .tokenMissing, .tokenInvalid, .tokenExpired, .tokenAudienceMismatch, .tokenReplayed,
        .tokenKeysUnavailable, .dpopProofMissing, .dpopProofInvalid, .dpopProofStale, .dpopProofReplayed, .dpopNonceRequired,
        .dpopKeyMismatch, .clientAttestationMissing, .clientAttestationInvalid, .clientAttestationExpired,
        .clientAttestationPoPInvalid, .clientAttestationPoPStale, .clientAttestationPoPReplayed, .clientAttestationChallengeRequired,
        .rateLimited, .connectionLimit, .requestTooSlow, .clientClosedRequest, .notFound, .methodNotAllowed, .storeUnavailable, .upstreamUnavailable, .upstreamUnreachable,
        .bodyNotForwarded, .authorizationRequestInvalid, .authorizationUnsupported, .internalError,
        .pinMismatch, .originNotAllowed, .certificateExpired, .hostnameMismatch, .certificateUntrusted,
        .connectionFailed, .requestTimeout, .responseSignatureInvalid, .transportUnsupported,
    ]

    static let catalogue: [String: Self] = Dictionary(all.map { ($0.rawValue, $0) }, uniquingKeysWith: { a, _ in a })
}
