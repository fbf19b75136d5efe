// SPDX-License-Identifier: Apache-2.0

/// What a verifier demands of a signature beyond its cryptographic validity (a "profile").
///
/// The default suits an API: a request signature must cover `@method` and the target
/// (`@target-uri`, or `@authority` + `@path` + `@query`), `content-digest` and `content-type` when
/// there is a body, and carry `created`, `keyid` and a `nonce`; `created` may be at most five
/// minutes old.
public struct VerificationPolicy: Sendable {
    /// A requirement on covered components that applies to some messages.
    public struct ComponentRule: Sendable {
        /// Methods the rule applies to (uppercase); `nil` for all. Ignored for responses.
        public var methods: Set<String>?
        /// `true`: only messages with a body; `false`: only without; `nil`: both.
        public var whenBody: Bool?
        /// Whether the rule applies to responses (`false`) or to requests (`true`).
        public var forRequests: Bool
        /// The signature must cover every component of at least one of these sets.
        public var oneOf: [[ComponentIdentifier]]

        public init(
            forRequests: Bool = true,
            methods: Set<String>? = nil,
            whenBody: Bool? = nil,
            oneOf: [[ComponentIdentifier]]
        ) {
            self.forRequests = forRequests
            self.methods = methods
            self.whenBody = whenBody
            self.oneOf = oneOf
        }

        public init(
            forRequests: Bool = true,
            methods: Set<String>? = nil,
            whenBody: Bool? = nil,
            all components: [ComponentIdentifier]
        ) {
            self.init(forRequests: forRequests, methods: methods, whenBody: whenBody, oneOf: [components])
        }

        func applies(to message: some HTTPMessageView) -> Bool {
            guard forRequests == message.isRequest else { return false }
            if let whenBody, whenBody == (message.bodyByteCount == 0) { return false }
            if let methods, let method = message.requestMethod, !methods.contains(method.uppercased()) { return false }
            return true
        }
    }

    /// Which signature of the message to verify.
    public enum Selection: Sendable, Hashable {
        /// The member with this label.
        case label(String)
        /// The single member whose `tag` is this value.
        case tag(String)
        /// The single signature the message carries (narrowed to known key ids when there are several).
        case only
    }

    public var selection: Selection
    public var componentRules: [ComponentRule]
    /// A message with a body must carry a covered, matching `Content-Digest` (RFC 9530).
    public var requireContentDigest: Bool
    public var requireCreated: Bool
    public var requireExpires: Bool
    public var requireNonce: Bool
    public var requireKeyID: Bool
    /// A required `tag` value (for example an application name), checked after selection.
    public var requiredTag: String?
    /// Oldest acceptable `created`, in seconds before now; `nil` for no limit.
    public var maximumAge: Int64?
    /// Tolerated clock difference between signer and verifier, in seconds.
    public var clockSkew: Int64
    /// Bound on `Signature-Input` and `Signature` together, in bytes.
    public var maximumSignatureHeaderBytes: Int
    /// Bounds on what those fields hold, checked while they are parsed: signatures per message,
    /// components per signature, parameters per signature or component.
    public var signatureLimits: SignatureFields.Limits
    /// How long to keep a nonce when the signature bounds neither its age nor its expiry, in seconds.
    public var nonceRetentionFallback: Int64
    /// Fields the next hop removes before the application sees them, beyond those `Connection`
    /// names (a proxy's own rules, given the lowercase name): a signature covering one is refused,
    /// since what it vouches for would not arrive. `nil` when nothing is removed.
    public var removedOnTheWay: (@Sendable (String) -> Bool)?

    public init(
        selection: Selection = .only,
        componentRules: [ComponentRule] = VerificationPolicy.standardRules,
        requireContentDigest: Bool = true,
        requireCreated: Bool = true,
        requireExpires: Bool = false,
        requireNonce: Bool = true,
        requireKeyID: Bool = true,
        requiredTag: String? = nil,
        maximumAge: Int64? = 300,
        clockSkew: Int64 = 30,
        maximumSignatureHeaderBytes: Int = 16 * 1024,
        signatureLimits: SignatureFields.Limits = .standard,
        nonceRetentionFallback: Int64 = 86_400
    ) {
        self.selection = selection
        self.componentRules = componentRules
        self.requireContentDigest = requireContentDigest
        self.requireCreated = requireCreated
        self.requireExpires = requireExpires
        self.requireNonce = requireNonce
        self.requireKeyID = requireKeyID
        self.requiredTag = requiredTag
        self.maximumAge = maximumAge
        self.clockSkew = clockSkew
        self.maximumSignatureHeaderBytes = maximumSignatureHeaderBytes
        self.signatureLimits = signatureLimits
        self.nonceRetentionFallback = nonceRetentionFallback
    }

    /// Requests must cover the method and the whole target.
    public static let requestTargetRules: [ComponentRule] = [
        ComponentRule(oneOf: [
            [.method, .targetURI],
            [.method, .authority, .path, .query],
        ])
    ]

    /// A request with a body must cover `content-type`: the digest fixes the bytes, and the type
    /// how the upstream reads them. Without it a body signed as JSON could be sent as a form and
    /// parsed into other values. A body without a `Content-Type` cannot be covered, and is refused.
    public static let bodyTypeRule = ComponentRule(whenBody: true, all: ["content-type"])

    /// The rules of ``standard``: ``requestTargetRules`` and ``bodyTypeRule``.
    public static let standardRules: [ComponentRule] = requestTargetRules + [bodyTypeRule]

    /// The default API profile.
    public static let standard = VerificationPolicy()

    /// Checks only what RFC 9421 itself requires: any covered components, no nonce or age limit.
    /// Suits checking published examples and diagnosing, not guarding an API.
    public static let permissive = VerificationPolicy(
        componentRules: [],
        requireContentDigest: false,
        requireCreated: false,
        requireNonce: false,
        requireKeyID: false,
        maximumAge: nil
    )
}
