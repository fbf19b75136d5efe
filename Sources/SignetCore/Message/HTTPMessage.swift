// SPDX-License-Identifier: Apache-2.0

/// An HTTP request or response as RFC 9421 sees it: control data, fields, and the body bytes.
public struct HTTPMessage: Sendable, Hashable {
    public enum Head: Sendable, Hashable {
        case request(method: String, target: RequestTarget)
        case response(status: Int)
    }

    public var head: Head
    public var fields: MessageFields
    /// The content bytes as transferred (after any Content-Encoding); empty when there is none.
    public var body: [UInt8]

    public init(head: Head, fields: MessageFields = [], body: [UInt8] = []) {
        self.head = head
        self.fields = fields
        self.body = body
    }

    /// A request to an absolute URI.
    public static func request(
        method: String,
        uri: String,
        fields: MessageFields = [],
        body: [UInt8] = []
    ) throws -> HTTPMessage {
        HTTPMessage(head: .request(method: method, target: try RequestTarget(uri: uri)), fields: fields, body: body)
    }

    public static func response(status: Int, fields: MessageFields = [], body: [UInt8] = []) -> HTTPMessage {
        HTTPMessage(head: .response(status: status), fields: fields, body: body)
    }

    public var isRequest: Bool {
        if case .request = head { return true }
        return false
    }

    public var method: String? {
        if case .request(let method, _) = head { return method }
        return nil
    }

    public var target: RequestTarget? {
        if case .request(_, let target) = head { return target }
        return nil
    }
}
