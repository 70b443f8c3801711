// The public API's types (NotifyAPI, in the client package) are part of every server module's vocabulary.
@_exported import NotifyAPI
