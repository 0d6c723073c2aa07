// What `import GarageLite` gives an app: the façade's module and the core's public types (keys,
// errors, statuses, queries, reports, the coders' protocols), declared in GarageLiteCore.
@_exported import GarageLiteCore
