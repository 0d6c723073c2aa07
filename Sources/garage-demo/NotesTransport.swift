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
