// The ready sync engine on the ready transport (GarageLiteClient's HTTPSyncTransport), and the
// transport an app may write instead (the WritingASyncJob article shows it).

// snippet.transport
import Foundation
import GarageLite
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a device's `SyncEngine` reaches the notes server: each call posts JSON to a route of its.
struct NotesTransport: SyncTransport {
    let server: URL

    func upload<Object: Codable>(_ batch: UploadBatch<Object>) async throws -> UploadResults<Object> {
        try await post(batch, to: "sync/\(batch.typeName)/upload")
    }

    func download<Object: Codable>(_ request: DownloadRequest<Object>) async throws -> DownloadBatch<Object> {
        try await post(request, to: "sync/\(request.typeName)/download")
    }

    /// The server answered with another status than 200 OK.
    struct StatusError: Error { let status: Int }
    private func post<Answer: Decodable>(_ body: some Encodable, to path: String) async throws -> Answer {
        var request = URLRequest(url: server.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        let (data, response) = try await URLSession.shared.data(for: request)
        if let http = response as? HTTPURLResponse, http.statusCode != 200 { throw StatusError(status: http.statusCode) }
        return try JSONDecoder().decode(Answer.self, from: data)
    }
}
// snippet.end

// snippet.engine
import GarageLiteClient

struct Note: Codable, Identifiable, Syncable {
    var id: String
    var teamID: String
    var title: String
    var items: [String] = []
    var syncStatus: SyncStatus = .notSynced    // the engine uploads what is .notSynced
}

func startSyncing(_ garage: Garage, token: @escaping @Sendable () async throws -> String?) -> (SyncEngine, Task<Void, Never>) {
    let transport = HTTPSyncTransport(servers: [URL(string: "https://notes.example.com")!], token: token)
    let engine = SyncEngine(garage: garage, transport: transport, types: [.of(Note.self)])
    let running = Task { await engine.run() }     // syncs after each edit, and when the server says
    return (engine, running)                      // running.cancel() stops it
}

func showStatus(of engine: SyncEngine) async {
    for await status in engine.statusUpdates() {
        print(status)                             // "uploading Note 50 of 120", "idle, failing: …"
    }
}
// snippet.end
