// SPDX-License-Identifier: Apache-2.0

/// Computes component values from a message (RFC 9421 §2.1, §2.2).
///
/// Returns one value per signature-base line: every component has exactly one, except
/// `@query-param` for a name that repeats, which has one per occurrence (§2.2.8).
/// A missing component is an error (`component_missing`), never an empty string.
struct ComponentResolver {
    let message: any HTTPMessageView
    let relatedRequest: (any HTTPMessageView)?
    /// The message's head, read once: each read through the protocol copies it (a request's
    /// method and target, a dozen references), and a base reads it for every component.
    let head: HTTPMessage.Head

    init(message: any HTTPMessageView, relatedRequest: (any HTTPMessageView)?) {
        self.message = message
        self.relatedRequest = relatedRequest
        self.head = message.head
    }

    func values(for component: ComponentIdentifier) throws -> [String] {
        var source = message
        if component.isFromRelatedRequest {
            guard case .response = head else {
                throw SignetError(.malformedHeader, "\(component) uses ;req on a request")
            }
            guard let relatedRequest else {
                throw SignetError(.componentMissing, "\(component) needs the request this response answers")
            }
            source = relatedRequest
        }
        for entry in component.parameters.entries where !Self.knownParameters.contains(entry.key) {
            throw SignetError(.componentUnsupported, "\(component) has unknown parameter \(entry.key.debugDescription)")
        }
        if component.isDerived { return try derived(component, in: source) }
        return [try field(component, in: source)]
    }

    /// Appends the component's signature-base lines (`"name": value` LF, one per value) to `base`.
    ///
    /// The common components — a field or a derived request component without parameters — are
    /// written straight from the message; everything else goes through ``values(for:)``.
    func appendLines(for component: ComponentIdentifier, to base: inout [UInt8]) throws {
        guard component.parameters.isEmpty, case .request(let method, let target) = head,
            !component.isDerived || Self.isWrittenDirectly(component.name)
        else {
            for value in try values(for: component) { try Self.appendLine(component, value.utf8, to: &base) }
            return
        }
        component.appendSerialized(to: &base)
        base += ": ".utf8
        let valueStart = base.count
        switch component.name {
        case "@method": base += method.utf8
        case "@target-uri": target.appendTargetURI(to: &base)
        case "@path": base += target.pathValue.utf8
        default:
            guard message.appendCombinedField(component.name, to: &base) else {
                throw SignetError(.componentMissing, "the message has no \(component.name.debugDescription) field")
            }
        }
        try Self.checkNoNewline(base[valueStart...], component)
        base.append(0x0A)
    }

    /// The derived components ``appendLines(for:to:)`` writes from the request without a string.
    private static func isWrittenDirectly(_ name: String) -> Bool {
        switch name {
        case "@method", "@target-uri", "@path": true
        default: false
        }
    }

    private static func appendLine(
        _ component: ComponentIdentifier,
        _ value: some Collection<UInt8>,
        to base: inout [UInt8]
    ) throws {
        try checkNoNewline(value, component)
        component.appendSerialized(to: &base)
        base += ": ".utf8
        base += value
        base.append(0x0A)
    }

    /// §2.5 step 2.4: a value must not contain a newline (it would forge extra lines).
    private static func checkNoNewline(_ value: some Collection<UInt8>, _ component: ComponentIdentifier) throws {
        let hasNewline =
            value.withContiguousStorageIfAvailable { $0.contains { $0 == 0x0A || $0 == 0x0D } }
            ?? value.contains { $0 == 0x0A || $0 == 0x0D }
        guard !hasNewline else {
            throw SignetError(.malformedHeader, "\(component.description) has a newline in its value")
        }
    }

    private static let knownParameters: Set<String> = ["sf", "key", "bs", "req", "tr", "name"]

    // MARK: Derived components (§2.2)

    private func derived(_ component: ComponentIdentifier, in message: any HTTPMessageView) throws -> [String] {
        guard !component.parameters.entries.contains(where: { $0.key != "req" && $0.key != "name" }) else {
            throw SignetError(.malformedHeader, "\(component) takes no field parameters")
        }
        if component.name == "@status" {
            guard case .response(let status) = message.head else {
                throw SignetError(.malformedHeader, "@status is only defined for responses")
            }
            return [String(status)]
        }
        guard case .request(let method, let target) = message.head else {
            throw SignetError(.malformedHeader, "\(component.name) is only defined for requests")
        }
        guard component.name == "@query-param" || component.parameters["name"] == nil else {
            throw SignetError(.malformedHeader, "\(component.name) takes no name parameter")
        }
        switch component.name {
        case "@method": return [method]
        case "@target-uri": return [target.targetURI]
        case "@authority": return [target.normalizedAuthority]
        case "@scheme": return [target.scheme]
        case "@request-target": return [target.requestTargetValue]
        case "@path": return [target.pathValue]
        case "@query": return [target.queryValue]
        case "@query-param": return try queryParameter(component, target: target)
        case "@signature-params":
            throw SignetError(.malformedHeader, "@signature-params cannot be a covered component")
        default:
            throw SignetError(.componentUnsupported, "unknown derived component \(component.name)")
        }
    }

    private func queryParameter(_ component: ComponentIdentifier, target: RequestTarget) throws -> [String] {
        guard case .string(let wanted) = component.parameters["name"] else {
            throw SignetError(.malformedHeader, "@query-param needs a string name parameter")
        }
        let wantedName = FormURLEncoding.reencode(wanted)
        let values = FormURLEncoding.pairs(target.query ?? "")
            .filter { $0.name == wantedName }
            .map(\.value)
        guard !values.isEmpty else {
            throw SignetError(.componentMissing, "query has no parameter \(wanted.debugDescription)")
        }
        return values
    }

    // MARK: Fields (§2.1)

    private func field(_ component: ComponentIdentifier, in message: any HTTPMessageView) throws -> String {
        let parameters = component.parameters
        if parameters["tr"] != nil {
            throw SignetError(.componentUnsupported, "trailer fields (;tr) are not supported")
        }
        let usesBS = parameters["bs"] == .boolean(true)
        let usesSF = parameters["sf"] == .boolean(true)
        let key = parameters["key"]
        if parameters["name"] != nil {
            throw SignetError(.malformedHeader, "\(component) : name applies to @query-param only")
        }
        if usesBS && (usesSF || key != nil) {
            throw SignetError(.malformedHeader, "\(component) combines bs with sf or key")
        }
        let lines = message.fieldValues(component.name)
        guard !lines.isEmpty else {
            throw SignetError(.componentMissing, "the message has no \(component.name.debugDescription) field")
        }
        if usesBS {
            return lines.map { ":" + Base64.encode(Array($0.trimmingOWS.utf8)) + ":" }.joined(separator: ", ")
        }
        let combined = lines.map(\.trimmingOWS).joined(separator: ", ")
        if let key {
            guard case .string(let memberKey) = key else {
                throw SignetError(.malformedHeader, "\(component): key must be a string")
            }
            let dictionary = try StructuredFieldParser.parseDictionary(combined)
            guard let entry = dictionary[memberKey] else {
                throw SignetError(.componentMissing, "\(component.name) has no member \(memberKey.debugDescription)")
            }
            return try StructuredFieldSerializer.member(entry.member)
        }
        if usesSF { return try Self.reserialize(combined) }
        return combined
    }

    /// Strict re-serialisation for `;sf`. The field's type is unknown here, so a dictionary is tried
    /// first, then a list; the two serialise identically wherever both parse.
    static func reserialize(_ value: String) throws -> String {
        if let dictionary = try? StructuredFieldParser.parseDictionary(value) {
            return try StructuredFieldSerializer.serialize(dictionary)
        }
        return try StructuredFieldSerializer.serialize(try StructuredFieldParser.parseList(value))
    }
}
