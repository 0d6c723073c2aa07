import Foundation
import NIOCore
import NIOPosix

/// What the clients sent the server, counted in the messages of PostgreSQL's wire protocol,
/// and how long the server took to answer.
struct ProtocolCounts: Sendable {
    /// Round trips: each `Sync` (the end of an extended query: parse, bind, execute) and each
    /// simple `Query` waits for the server's `ReadyForQuery`.
    var roundTrips = 0
    /// Statements executed, by their text (``key(_:)``); a named statement's preparation (a
    /// round trip that executes nothing) counts as `prepare …`.
    var executions: [String: Int] = [:]
    /// The time from each round trip's `Sync` (or `Query`) to the server's `ReadyForQuery`, as
    /// the relay sees it (the server's work and the loopback hop between the relay and the
    /// server), by the statement executed (a `Sync` that executed none is a statement's
    /// preparation: `prepare …`).
    var serverNanoseconds: [String: Int64] = [:]

    static func - (after: ProtocolCounts, before: ProtocolCounts) -> ProtocolCounts {
        var difference = ProtocolCounts(roundTrips: after.roundTrips - before.roundTrips)
        for (statement, count) in after.executions where count > before.executions[statement] ?? 0 {
            difference.executions[statement] = count - (before.executions[statement] ?? 0)
        }
        for (statement, time) in after.serverNanoseconds where time > before.serverNanoseconds[statement] ?? 0 {
            difference.serverNanoseconds[statement] = time - (before.serverNanoseconds[statement] ?? 0)
        }
        return difference
    }

    /// A statement as counted: whitespace folded, the bench's schema names replaced by `S`; a
    /// long one cut to its first 40 characters and the first 100 of its `WHERE` clause (what
    /// tells GarageLite's reads of whole rows apart).
    static func key(_ sql: String) -> String {
        let folded = sql.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            .replacing(#/gbp_[0-9]+_[0-9]+/#, with: "S")
        guard folded.count > 140 else { return folded }
        let head = String(folded.prefix(40)) + "…"
        guard let clause = folded.range(of: " WHERE ") else { return head }
        let condition = folded[clause.lowerBound...]
        return head + (condition.count > 100 ? String(condition.prefix(100)) + "…" : String(condition))
    }
}

/// A TCP relay between the bench's clients and PostgreSQL that counts, on the way, the round
/// trips and statements each client sends, and times the server's answers
/// (``ProtocolCounts``): the same count for GarageLite, whose statements the bench can't see,
/// as for the floor, and for the worker processes too. It runs on a thread of its own and adds
/// its own latency, so the counting pass is not timed.
final class CountingRelay: Sendable {
    /// The port it listens on, on 127.0.0.1.
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel
    /// The counts of every connection, on the relay's one event loop.
    private let tally: NIOLoopBound<Tally>

    /// The counts, kept on the event loop.
    final class Tally {
        var counts = ProtocolCounts()
    }

    private init(port: Int, group: MultiThreadedEventLoopGroup, listener: any Channel, tally: NIOLoopBound<Tally>) {
        self.port = port
        self.group = group
        self.listener = listener
        self.tally = tally
    }

    /// Starts relaying connections to `upstream`.
    static func start(upstream: SocketAddress) async throws -> CountingRelay {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let tally = try await loop.submit { NIOLoopBound(Tally(), eventLoop: loop) }.get()
        let listener = try await ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { client in
                // Both sides of a relayed connection run on the relay's one loop, with one parser.
                let parser = NIOLoopBound(WireParser(tally: tally.value), eventLoop: client.eventLoop)
                return ClientBootstrap(group: client.eventLoop)
                    .channelOption(.socketOption(.tcp_nodelay), value: 1)
                    .channelInitializer { server in
                        server.eventLoop.makeCompletedFuture {
                            try server.pipeline.syncOperations.addHandler(Forwarder(to: client, parser: parser.value, side: .server))
                        }
                    }
                    .connect(to: upstream)
                    .flatMapThrowing { server in
                        try client.pipeline.syncOperations.addHandler(Forwarder(to: server, parser: parser.value, side: .client))
                    }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        guard let port = listener.localAddress?.port else { throw BenchFailure("the relay has no port") }
        return CountingRelay(port: port, group: group, listener: listener, tally: tally)
    }

    /// The counts since the relay started.
    func counts() async throws -> ProtocolCounts {
        try await tally.eventLoop.submit { [tally] in tally.value.counts }.get()
    }

    func stop() async {
        try? await listener.close()
        try? await group.shutdownGracefully()
    }
}

/// Writes what one side of a relayed connection reads to the other side, after showing it to
/// the connection's ``WireParser``.
private final class Forwarder: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let partner: any Channel
    private let parser: WireParser
    private let side: WireParser.Side

    init(to partner: any Channel, parser: WireParser, side: WireParser.Side) {
        self.partner = partner
        self.parser = parser
        self.side = side
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        parser.read(bytes, from: side)
        partner.writeAndFlush(bytes, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner.close(promise: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Reads both directions of one connection's wire protocol (messages are a type byte and a
/// length; the client's first is a startup message, without the type): counts the client's
/// round trips and statements, and times each round trip until the server's `ReadyForQuery`.
private final class WireParser {
    enum Side { case client, server }

    private let tally: CountingRelay.Tally
    /// The bytes read and not yet parsed (a message may come in pieces), by side.
    private var pendingFromClient = ByteBuffer()
    private var pendingFromServer = ByteBuffer()
    /// Whether the client's next message is a startup message.
    private var inStartup = true
    /// Bytes the server answers an SSL or GSS request with, before its messages.
    private var serverSingleBytes = 0
    /// The text of the connection's prepared statements, by name ("" is the unnamed one).
    private var statements: [String: String] = [:]
    /// The statement the last `Bind` bound, which the next `Execute` runs.
    private var bound = "?"
    /// The statement executed since the last `Sync`, if any.
    private var executed: String?
    /// The last statement parsed, for a `Sync` that ends its preparation.
    private var parsed = "?"
    /// The round trips waiting for the server's `ReadyForQuery`: their statement and start.
    private var waiting: [(statement: String, start: NIODeadline)] = []

    init(tally: CountingRelay.Tally) {
        self.tally = tally
    }

    func read(_ bytes: ByteBuffer, from side: Side) {
        switch side {
        case .client:
            pendingFromClient.writeImmutableBuffer(bytes)
            parseClient()
            pendingFromClient.discardReadBytes()
        case .server:
            pendingFromServer.writeImmutableBuffer(bytes)
            parseServer()
            pendingFromServer.discardReadBytes()
        }
    }

    /// The next whole typed message of `buffer`: its type and body.
    private static func message(_ buffer: inout ByteBuffer) -> (type: UInt8, body: ByteBuffer)? {
        let start = buffer.readerIndex
        guard let type = buffer.getInteger(at: start, as: UInt8.self),
              let length = buffer.getInteger(at: start + 1, as: Int32.self), buffer.readableBytes >= 1 + Int(length),
              let body = buffer.getSlice(at: start + 5, length: Int(length) - 4) else { return nil }
        buffer.moveReaderIndex(forwardBy: 1 + Int(length))
        return (type, body)
    }

    private func parseClient() {
        while inStartup {
            // Length, then a code: an SSLRequest or GSSENCRequest is answered by one byte, then
            // the startup message follows.
            let start = pendingFromClient.readerIndex
            guard let length = pendingFromClient.getInteger(at: start, as: Int32.self),
                  pendingFromClient.readableBytes >= Int(length),
                  let code = pendingFromClient.getInteger(at: start + 4, as: Int32.self) else { return }
            pendingFromClient.moveReaderIndex(forwardBy: Int(length))
            if code == 80_877_103 || code == 80_877_104 { serverSingleBytes += 1 } else { inStartup = false }
        }
        while let (type, message) = Self.message(&pendingFromClient) {
            var body = message
            switch type {
            case UInt8(ascii: "P"):
                let name = body.readNullTerminatedString() ?? ""
                parsed = ProtocolCounts.key(body.readNullTerminatedString() ?? "?")
                statements[name] = parsed
            case UInt8(ascii: "B"):
                _ = body.readNullTerminatedString()
                bound = statements[body.readNullTerminatedString() ?? ""] ?? "?"
            case UInt8(ascii: "E"):
                tally.counts.executions[bound, default: 0] += 1
                executed = bound
            case UInt8(ascii: "Q"):
                let statement = ProtocolCounts.key(body.readNullTerminatedString() ?? "?")
                tally.counts.executions[statement, default: 0] += 1
                tally.counts.roundTrips += 1
                waiting.append((statement, .now()))
            case UInt8(ascii: "S"):
                tally.counts.roundTrips += 1
                if executed == nil {
                    executed = "prepare " + parsed
                    tally.counts.executions[executed ?? "", default: 0] += 1
                }
                waiting.append((executed ?? "?", .now()))
                executed = nil
            default:
                break
            }
        }
    }

    private func parseServer() {
        while serverSingleBytes > 0, pendingFromServer.readableBytes > 0 {
            pendingFromServer.moveReaderIndex(forwardBy: 1)
            serverSingleBytes -= 1
        }
        guard serverSingleBytes == 0 else { return }
        while let (type, _) = Self.message(&pendingFromServer) {
            // The first ReadyForQuery ends the startup, which waits for none.
            guard type == UInt8(ascii: "Z"), !waiting.isEmpty else { continue }
            let (statement, start) = waiting.removeFirst()
            tally.counts.serverNanoseconds[statement, default: 0] += (NIODeadline.now() - start).nanoseconds
        }
    }
}
